import { execFile } from 'node:child_process';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..', '..');

/** What one CLI run printed and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `nestjs-distributed-lock <args>` from the sources (ts-node) in its own process. */
export function runCliProcess(args: string[]): Promise<CliRun> {
  const register = require.resolve('ts-node/register/transpile-only');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', register, path.join(REPO, 'lib', 'cli', 'bin.ts'), ...args],
      { cwd: REPO, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 99) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
