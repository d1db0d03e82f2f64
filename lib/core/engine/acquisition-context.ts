import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import type { LocalWaitQueues } from '../waiting/wait-queue';
import type { HeldLocks } from './held-locks';
import type { LockKeyNames } from './key-space';
import type { WakeupChannels } from './lock-backend';
import type { LockEvents } from './lock-events';

/**
 * A command sent near the end of a wait may take this much longer than `waitMs` before it is given
 * up on: a Redis that hangs cannot hold a call more than `waitMs` + this margin.
 */
export const ATTEMPT_MARGIN_MS = 400;

/** What an acquisition needs from its engine. */
export interface AcquisitionContext {
  readonly hub: WakeupChannels;
  readonly queues: LocalWaitQueues;
  readonly held: HeldLocks;
  readonly events: LockEvents;
  /** Aborted by close(): every waiter gives up. */
  readonly closing: AbortSignal;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** Fencing tokens a fresh grant of a cohort kind reserves (1: no cohorts). */
  readonly reserveTokens: number;
  /** Turns a busy holder's remaining lease into an honest "retry after" (see HoldTimes). */
  retryAfter(key: string, remainingLeaseMs: number): number;
  isClosed(): boolean;
}

/** One call's parameters, validated and with defaults applied. */
export interface AcquisitionRequest {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly kind: LockKind;
  readonly options: LockOptions;
  readonly waitMs: number;
  readonly leaseMs: number;
  /** True when the watchdog renews the lease (no fixed `leaseMs`). */
  readonly watchdog: boolean;
  /** tryAcquire(): resolve null instead of throwing when the wait runs out. */
  readonly tryOnly: boolean;
}
