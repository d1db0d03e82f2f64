import Redis from 'ioredis';
import { Redlock } from '@sesamecare-oss/redlock';
import { BENCH_LEASE_MS, type BenchLock } from './bench-lock';

/** The library's default retryDelay: the retry count is sized from it to match our wait budget. */
const RETRY_DELAY_MS = 200;

/**
 * @sesamecare-oss/redlock (the maintained TypeScript fork of redlock) on one client; defaults
 * except `retryCount`, sized so its wait budget equals ours.
 */
export function create(redisUrl: string): BenchLock {
  const redis = new Redis(redisUrl);
  const redlock = new Redlock([redis]);
  redlock.on('error', () => undefined);
  return {
    name: '@sesamecare-oss/redlock (leaseMs 10 s)',
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
