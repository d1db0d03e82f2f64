import Redis from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';

/**
 * redis-semaphore's Mutex as its README shows it: one Mutex object per acquisition, retryInterval
 * 10 ms (default), `acquireTimeout` = our wait budget. Watchdog rows: default lockTimeout (10 s),
 * auto-refreshed; fixed-lease rows: `lockTimeout` = the lease, `refreshInterval: 0` (no refresh).
 */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  const redis = new Redis(redisUrl);
  const lease = settings.leaseMs === undefined ? {} : { lockTimeout: settings.leaseMs, refreshInterval: 0 };
  return {
    name: `redis-semaphore${leaseLabel(settings)}`,
    async acquire(key, waitMs) {
      const mutex = new Mutex(redis, key, { acquireTimeout: waitMs, onLockLost: () => undefined, ...lease });
      await mutex.acquire();
      return () => mutex.release();
    },
    close: async () => {
      await redis.quit();
    },
  };
}
