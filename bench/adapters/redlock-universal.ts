import Redis from 'ioredis';
import { createLock, IoredisAdapter, type Lock } from 'redlock-universal';
import { BENCH_LEASE_MS, type BenchLock } from './bench-lock';

/** The library's default retryDelay for a single-instance lock: retries are sized from it. */
const RETRY_DELAY_MS = 100;

/**
 * redlock-universal's single-instance lock (`createLock` + IoredisAdapter, as in its README),
 * default retryDelay (100 ms) and circuit breaker; `retryAttempts` sized to our wait budget.
 * One lock object per key, reused like the library's NestJS wrapper does.
 */
export function create(redisUrl: string): BenchLock {
  const redis = new Redis(redisUrl);
  const adapter = new IoredisAdapter(redis);
  const locks = new Map<string, Lock>();
  return {
    name: 'redlock-universal (leaseMs 10 s)',
    async acquire(key, waitMs) {
      const retryAttempts = Math.ceil(waitMs / RETRY_DELAY_MS);
      const id = `${key}|${retryAttempts}`;
      let lock = locks.get(id);
      if (!lock) {
        lock = createLock({ adapter, key, ttl: BENCH_LEASE_MS, retryAttempts });
        locks.set(id, lock);
      }
      const handle = await lock.acquire();
      return () => lock.release(handle);
    },
    close: async () => {
      await redis.quit();
    },
  };
}
