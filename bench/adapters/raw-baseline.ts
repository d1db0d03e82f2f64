import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { BENCH_LEASE_MS, type BenchLock } from './bench-lock';

/** Compare-and-delete: only the holder of the token may delete the key. */
const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The hand-rolled lock from the seed posts: `SET key token NX PX lease`, Lua compare-and-delete
 * release, and a spin with exponential backoff 1 → 128 ms while busy. No pub/sub, no fencing,
 * no watchdog: the floor every library is measured against.
 */
export function create(redisUrl: string): BenchLock {
  const redis = new Redis(redisUrl);
  redis.defineCommand('benchRawRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
  const release = redis as unknown as { benchRawRelease(key: string, token: string): Promise<number> };
  return {
    name: 'raw SET NX PX + backoff (leaseMs 10 s)',
    async acquire(key, waitMs) {
      const token = randomBytes(16).toString('hex');
      const deadline = performance.now() + waitMs;
      let delay = 1;
      for (;;) {
        if ((await redis.set(key, token, 'PX', BENCH_LEASE_MS, 'NX')) === 'OK') {
          return () => release.benchRawRelease(key, token);
        }
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`raw baseline: ${key} still busy after ${waitMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
        delay = Math.min(delay * 2, 128);
      }
    },
    close: async () => {
      await redis.quit();
    },
  };
}
