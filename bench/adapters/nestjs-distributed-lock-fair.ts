import { createLockEngine } from '../../lib/core';
import type { BenchLock } from './bench-lock';
import { engineAdapter } from './nestjs-distributed-lock';

/** This library's fair lock (`fair: true`, FIFO across processes in Redis), for comparison: `--fair`. */
export function create(redisUrl: string): BenchLock {
  const engine = createLockEngine({ redis: redisUrl });
  const adapter = engineAdapter('nestjs-distributed-lock (fair: true)', engine);
  return {
    ...adapter,
    async acquire(key, waitMs) {
      const handle = await engine.acquire(key, { waitMs, fair: true });
      return () => handle.release();
    },
  };
}
