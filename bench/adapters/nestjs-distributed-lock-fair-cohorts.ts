import { createLockEngine } from '../../lib/core';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/**
 * This library's fair lock with fair cohorts (`cohort: { fair: true }`): one place in the Redis queue
 * per process, local hand-offs inside it. Opt-in: the default fair lock keeps one place per waiter.
 */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  const name = `nestjs-distributed-lock fair, fair cohorts${leaseLabel(settings)}`;
  const engine = createLockEngine({ redis: redisUrl, cohort: { fair: true } });
  return engineAdapter(name, engine, settings, { fair: true });
}
