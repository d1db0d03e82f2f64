import { createLockEngine } from '../../lib/core';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/**
 * This library without the inspection registry (`inspection: false`): the reference for the
 * registry's overhead (the default row keeps it on). `--registry`, and in every run without --only.
 */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  return engineAdapter(
    `nestjs-distributed-lock (inspection: false)${leaseLabel(settings)}`,
    createLockEngine({ redis: redisUrl, inspection: false }),
    settings,
  );
}
