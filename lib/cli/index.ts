// The CLI's programmatic entry (the `nestjs-distributed-lock` command runs bin.ts).
export { runCli, CLI_EXIT } from './run-cli';
export type { CliIo } from './run-cli';
