import { createLockEngine } from '../../lib/core';
import { leaseLabel, type BenchLock, type BenchLockSettings } from './bench-lock';

/**
 * This library, engine defaults (pub/sub wake-ups, 1 → 128 ms backoff, cohorts at their default
 * bounds); per call `waitMs`, and `leaseMs` in the fixed-lease rows (else the watchdog lease).
 * Counts attempts and local hand-offs (`acquired` with `handedOver: true`: a grant passed on inside
 * the process, no Redis command) from the engine's own events for profiling.
 */
export function create(redisUrl: string, settings: BenchLockSettings): BenchLock {
  return engineAdapter(
    `nestjs-distributed-lock${leaseLabel(settings)}`,
    createLockEngine({ redis: redisUrl }),
    settings,
  );
}

/** The adapter around any engine (or DistributedLockService) with this library's API. */
export function engineAdapter(
  name: string,
  engine: {
    acquire: ReturnType<typeof createLockEngine>['acquire'];
    readonly events: ReturnType<typeof createLockEngine>['events'];
    close(): Promise<unknown>;
  },
  settings: BenchLockSettings,
  extra: { readonly fair?: true } = {},
): BenchLock {
  const options = { ...(settings.leaseMs !== undefined && { leaseMs: settings.leaseMs }), ...extra };
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
      const handle = await engine.acquire(key, { waitMs, ...options });
      return () => handle.release();
    },
    metrics: () => ({ ...counts }),
    close: async () => void (await engine.close()),
  };
}
