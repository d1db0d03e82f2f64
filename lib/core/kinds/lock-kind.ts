import type { LockOptions } from '../options/lock-options';
import type { LockKeyNames, LockKindTag } from './key-space';

/*
 * What a lock kind is: the contract every kind class implements (attempt, release, renew) and what
 * crosses it. The kind classes (reentrant-mutex, token-lock, read-write-lock, fair-lock, semaphore)
 * each hold one kind's behaviour; the table that picks one is kind-registry.ts, the Redis names of a
 * lock key-space.ts, and what the scripts reply script-replies.ts.
 */

/** One attempt to take (or re-enter) a lock. */
export interface AttemptRequest {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly owner: string;
  readonly holdId: string;
  readonly leaseMs: number;
  /** True when this async context already holds the lock with `owner`: re-enter, never a fresh grant. */
  readonly reenter: boolean;
  readonly options: LockOptions;
  /** Fencing tokens a fresh grant reserves (kinds with `cohorts`): its own plus those for local hand-offs. */
  readonly reserveTokens?: number;
  /** The caller's process (engine) id, the prefix of its owner ids. */
  readonly process?: string;
  /** The process may be recorded as a waiter of this lock (a busy attempt): a grant removes it. */
  readonly recordedWaiting?: boolean;
  /** The attempt's command settles within this (capped by the command timeout); default: that timeout. */
  readonly timeoutMs?: number;
}

/** What an attempt got. */
export type AttemptResult =
  | { status: 'granted'; fencingToken: number; reentered: boolean; replicaAcks?: number }
  /** `reason`: why, when it is more than "held by another owner" (e.g. a RedLock split vote). */
  | { status: 'busy'; retryAfterMs: number; reason?: string }
  /** Re-entry was asked, but Redis no longer has this owner's lock. */
  | { status: 'not-held' };

/** Identifies one hold of one grant. */
export interface HoldRef {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly owner: string;
  readonly holdId: string;
  readonly options: LockOptions;
  /** The last release of a cohort at its bound: keep this process out for `ms` (kinds that can). */
  readonly yieldTo?: { readonly process: string; readonly ms: number };
}

/** `released`: the lock is free now; `still-held`: nested holds remain; `not-held`: nothing was ours. */
export type ReleaseResult = 'released' | 'still-held' | 'not-held';

/** One lease to renew, or (`leaseMs` 0) to check without renewing it. */
export interface RenewRequest extends HoldRef {
  /** The new lease; 0 only checks that the lock is still held (a connection came back). */
  readonly leaseMs: number;
  /** The renewal settles within this (capped by the command timeout): the lease left, locally. */
  readonly timeoutMs?: number;
  /** The grant's open holds (first the base hold): RedLock recreates them on a node that lost the lock. */
  readonly holdIds?: readonly string[];
}

/**
 * `gone`: expired or deleted; `taken-over`: another owner holds it now; `unchecked` (checks only, on
 * a Cluster): its node could not answer while others did (when none answers, the call rejects).
 */
export type RenewResult = 'renewed' | 'gone' | 'taken-over' | 'unchecked';

/**
 * A lock kind (mutex, token lock, read-write, fair, semaphore, RedLock...): the Redis side of
 * acquire, release and renew. The engine owns waiting, leases, the watchdog, context and handles.
 */
export interface LockKind {
  /** Part of the Redis key name; kinds with the same tag exclude each other. */
  readonly tag: LockKindTag;
  /** True: only the local head waiter attempts; false: every local waiter may (shared holders). */
  readonly exclusive: boolean;
  /** Whether the same async context may take it again. */
  readonly reentrant: boolean;
  /** True when grants can reserve fencing tokens, so a release may hand the lock to a local waiter. */
  readonly cohorts?: boolean;
  /**
   * Kinds whose releases wake one waiter by owner id (`@<owner>`: the fair lock's queue head): other
   * waiters sleep up to this long between attempts (which keep their place), not the backoff cap.
   */
  readonly directedWakeupSleepMs?: number;
  attempt(request: AttemptRequest): Promise<AttemptResult>;
  release(hold: HoldRef): Promise<ReleaseResult>;
  /** Renews (or, with `leaseMs` 0, checks) many leases in as few round trips as the topology allows. */
  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]>;
  /** Per-request exclusivity when it depends on the options (read-write: writers exclusive, readers shared). */
  isExclusive?(options: LockOptions): boolean;
  /**
   * Called once when a waiter gives up (timeout, abort, error, shutdown) after at least one attempt,
   * for kinds that keep waiters in Redis (fair queue, writer-waiting marker). Must not throw.
   */
  abandon?(request: AttemptRequest): Promise<void>;
}
