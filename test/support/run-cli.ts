import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { TS_REGISTER } from './spawn-worker';

const REPO = path.resolve(__dirname, '..', '..');

/** What one CLI run printed and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `nestjs-distributed-lock <args>` from the sources (TypeScript, test/support/ts-register.cjs) in its own process. */
export function runCliProcess(args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', TS_REGISTER, path.join(REPO, 'lib', 'cli', 'bin.ts'), ...args],
      { cwd: REPO, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 99) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
