import type { LockEvents } from '../events/lock-events';
import type { HeldLocks } from '../grant/held-locks';
import type { Runtime } from '../runtime/runtime';
import type { LocalWaitQueues } from './local-wait-queues';
import type { WakeupChannels } from './wakeup-hub';

/** What an acquisition needs from its engine. */
export interface AcquisitionContext {
  /** The engine's clocks, timers and random ids. */
  readonly runtime: Runtime;
  readonly hub: WakeupChannels;
  readonly queues: LocalWaitQueues;
  readonly held: HeldLocks;
  readonly events: LockEvents;
  /** Aborted by close(): every waiter gives up. */
  readonly closing: AbortSignal;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** Fencing tokens a fresh grant of a cohort kind reserves (1: no cohorts). */
  readonly reserveTokens: number;
  /**
   * A fixed-lease attempt with local waiters behind it asks Redis for this much more than its
   * `leaseMs` (the cohort budget), so the lock can be handed over locally with each successor's whole
   * lease covered (0: no cohorts).
   */
  readonly cohortLeaseExtraMs: number;
  /**
   * Locks on which a busy attempt of this process may have recorded it as a waiter in Redis: only
   * a grant of one of these needs to remove that record (the uncontended grant skips it).
   */
  readonly recordedWaits: Set<string>;
  /** Turns a busy holder's remaining lease into an honest "retry after" (see HoldTimes). */
  retryAfter(key: string, remainingLeaseMs: number): number;
  isClosed(): boolean;
}
