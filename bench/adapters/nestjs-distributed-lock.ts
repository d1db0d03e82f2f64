import { createLockEngine } from '../../lib/core';
import type { BenchLock } from './bench-lock';

/**
 * This library, engine defaults (watchdog lease, pub/sub wake-ups, 1 → 128 ms backoff); only
 * `waitMs` is passed per call (cohorts at their default bounds). Counts attempts and local
 * hand-offs (`acquired` with `handedOver: true`: a grant passed on inside the process, no Redis
 * command) from the engine's own events for profiling.
 */
export function create(redisUrl: string): BenchLock {
  return engineAdapter('nestjs-distributed-lock', createLockEngine({ redis: redisUrl }));
}

/** The adapter around any engine with this library's API. */
export function engineAdapter(
  name: string,
  engine: Pick<ReturnType<typeof createLockEngine>, 'acquire' | 'events' | 'close'>,
): BenchLock {
  const counts = { acquired: 0, attempts: 0, handedOver: 0, contended: 0, notAcquired: 0 };
  engine.events.on('acquired', (e) => {
    counts.acquired++;
    counts.attempts += e.attempts;
    if (e.handedOver) counts.handedOver++;
  });
  engine.events.on('contended', () => counts.contended++);
  engine.events.on('notAcquired', () => counts.notAcquired++);
  return {
    name,
    async acquire(key, waitMs) {
      const handle = await engine.acquire(key, { waitMs });
      return () => handle.release();
    },
    metrics: () => ({ ...counts }),
    close: () => engine.close(),
  };
}
