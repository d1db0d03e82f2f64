import Redis from 'ioredis';
import Redlock from 'redlock';
import { BENCH_LEASE_MS, type BenchLock } from './bench-lock';

/** redlock's default retryDelay (README): the retry count is sized from it to match our wait budget. */
const RETRY_DELAY_MS = 200;

/**
 * redlock 5 (beta) on one client, its README's acquire/release API, default retryDelay (200 ms) and
 * jitter; only `retryCount` is set so its total wait budget equals ours (waitMs / retryDelay).
 */
export function create(redisUrl: string): BenchLock {
  const redis = new Redis(redisUrl);
  const redlock = new Redlock([redis]);
  redlock.on('error', () => undefined); // "resource locked" votes are reported here; they are not failures
  return {
    name: 'redlock (leaseMs 10 s)',
    async acquire(key, waitMs) {
      const lock = await redlock.acquire([key], BENCH_LEASE_MS, {
        retryCount: Math.ceil(waitMs / RETRY_DELAY_MS),
      });
      return () => lock.release();
    },
    close: async () => {
      await redis.quit();
    },
  };
}
