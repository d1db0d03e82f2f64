import * as path from 'node:path';
import type { createLockEngine } from '../../lib/core';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/**
 * An earlier release of this library beside today's, in the same run: the `lib/` of that release,
 * checked out at BENCH_BEFORE_LIB (e.g. `git worktree add ../before <commit>` and its `lib` folder,
 * with the same node_modules resolvable from there), loaded through its own `core` entry. Only run
 * when asked for with `--before=DIR` (which sets BENCH_BEFORE_LIB); the row is named after the folder.
 */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  const dir = process.env.BENCH_BEFORE_LIB;
  if (!dir)
    throw new Error('BENCH_BEFORE_LIB is not set (npm run bench -- --before=<lib folder of a release>)');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const core = require(path.resolve(dir, 'core')) as { createLockEngine: typeof createLockEngine };
  const label = process.env.BENCH_BEFORE_LABEL ?? path.basename(path.resolve(dir, '..'));
  return engineAdapter(
    `nestjs-distributed-lock before (${label})${leaseLabel(settings)}`,
    core.createLockEngine({ redis: redisUrl }),
    settings,
  );
}
