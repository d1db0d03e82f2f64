import { Redisson } from 'node-redisson';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';

/**
 * node-redisson (a port of Java Redisson's RLock): pub/sub unlock messages, watchdog lease
 * (default 30 s). One lock object per acquisition (its owner identity is the lock object), and
 * `tryLock(waitMs, true)`: wait budget = ours, lease = watchdog; `tryLock(waitMs, leaseMs)` in the
 * fixed-lease rows.
 */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  const { hostname, port } = new URL(redisUrl);
  const redisson = new Redisson({ redis: { options: { host: hostname, port: Number(port) } } });
  return {
    name: `node-redisson${leaseLabel(settings)}`,
    async acquire(key, waitMs) {
      const lock = redisson.getLock(key);
      if (!(await lock.tryLock(waitMs, settings.leaseMs ?? true)))
        throw new Error(`node-redisson: ${key} still busy after ${waitMs} ms`);
      return () => lock.unlock();
    },
    close: () => redisson.quit(),
  };
}
