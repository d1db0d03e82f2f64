import { createLockEngine } from '../../lib/core';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/** This library's fair lock (`fair: true`, FIFO across processes in Redis), for comparison. */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  const name = `nestjs-distributed-lock fair${leaseLabel(settings)}`;
  return engineAdapter(name, createLockEngine({ redis: redisUrl }), settings, { fair: true });
}
