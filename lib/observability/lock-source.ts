import type { LockEvents } from '../core/public';

/** Something with lock events and live counts: a LockEngine or the Nest DistributedLockService. */
export interface LockEventSource {
  readonly events: LockEvents;
  stats(): { held: number };
}

/** The events of `source`, and its live held-locks count when it has one. */
export function resolveLockSource(source: LockEvents | LockEventSource): {
  events: LockEvents;
  heldLocks?: () => number;
} {
  if (source && typeof (source as LockEventSource).stats === 'function' && 'events' in source) {
    const withStats = source as LockEventSource;
    return { events: withStats.events, heldLocks: () => withStats.stats().held };
  }
  if (source && typeof (source as LockEvents).on === 'function') return { events: source as LockEvents };
  throw new TypeError(
    'Pass lock events (engine.events / service.events), a LockEngine or the DistributedLockService',
  );
}
