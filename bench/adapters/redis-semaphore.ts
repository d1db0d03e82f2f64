import Redis from 'ioredis';
import { Mutex } from 'redis-semaphore';
import type { BenchLock } from './bench-lock';

/**
 * redis-semaphore's Mutex as its README shows it: one Mutex object per acquisition, default
 * lockTimeout (10 s, auto-refreshed), retryInterval (10 ms); `acquireTimeout` = our wait budget.
 */
export function create(redisUrl: string): BenchLock {
  const redis = new Redis(redisUrl);
  return {
    name: 'redis-semaphore',
    async acquire(key, waitMs) {
      const mutex = new Mutex(redis, key, { acquireTimeout: waitMs, onLockLost: () => undefined });
      await mutex.acquire();
      return () => mutex.release();
    },
    close: async () => {
      await redis.quit();
    },
  };
}
