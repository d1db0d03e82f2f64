import { LockLostError, LockLostReason } from '../errors';
import type { LockKeyNames } from '../kinds/key-space';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { assertDuration } from '../options/validation';
import { Cohort, type CohortOpening } from './cohort';
import { deadlines, type Deadline } from './deadlines';
import type { HeldLocks } from './held-locks';
import { monotonicMs } from './deadlines';

/**
 * Redlock's clock-drift allowance, applied to every lease: 1 % of the lease plus 2 ms. A lease ends
 * in this process that much before Redis can expire it, so a holder learns of a loss before another
 * process can be granted the lock, even when its timer fires a little late or its clock runs a
 * little fast against the server's (see docs/GUARANTEES.md, "Leases end early"). RedLock uses the
 * same allowance for its validity.
 */
export const DRIFT_FACTOR = 0.01;
/** The fixed part of the drift allowance, in ms (timer granularity). */
export const DRIFT_FLOOR_MS = 2;

/** The drift allowance of a lease of `leaseMs`, in ms. */
export function leaseDriftMs(leaseMs: number): number {
  return Math.ceil(leaseMs * DRIFT_FACTOR) + DRIFT_FLOOR_MS;
}

/** What a new grant is: the lock, its owner and token, and its lease. */
export interface GrantSpec {
  readonly kind: LockKind;
  readonly key: string;
  readonly names: LockKeyNames;
  readonly owner: string;
  readonly fencingToken: number;
  readonly options: LockOptions;
  readonly leaseMs: number;
  readonly watchdog: boolean;
  /** Monotonic time the granting request was sent: the lease is counted from then. */
  readonly requestedAt: number;
  readonly replicaAcks?: number;
  /** Monotonic time of the grant when it is not `requestedAt` (a local hand-off). */
  readonly grantedAt?: number;
  /** The per-process cohort this grant belongs to, or the opening of a new one (a fresh cohort grant). */
  readonly cohort?: Cohort | CohortOpening;
}

/**
 * One grant of a lock by Redis: owner, fencing token, lease and the signal shared by the handles of
 * its holds (the first acquire and every re-entry). Its local end (the lease minus the drift
 * allowance, or `maxHoldMs`) is a deadline on the process' one timer; a renewal moves it.
 */
export class LockGrant implements Deadline {
  /** Created on first use (handle.signal or a loss): most grants never need one. */
  private controller?: AbortController;
  readonly openHolds = new Set<string>();
  /** Monotonic time at which the lease runs out unless renewed (counted from before the request). */
  expiresAt: number;
  /**
   * Monotonic time at which this process considers the lease over: `expiresAt` minus the drift
   * allowance, so the holder is told before Redis can grant the lock to anyone else.
   */
  localEnd: number;
  /** Monotonic time the granting request was sent. */
  readonly grantedAt: number;
  lost?: LockLostError;
  ended = false;
  /** The lease in ms. */
  readonly leaseMs: number;
  /** True when the watchdog renews the lease. */
  readonly watchdog: boolean;
  readonly replicaAcks?: number;
  /** Monotonic time after which the lock is not renewed any more (maxHoldMs); Infinity without. */
  readonly holdDeadline: number;
  /** The cohort this grant belongs to, once it exists (see `cohort`). */
  private cohortState?: Cohort;
  /** A fresh cohort grant's opening: its Cohort is built when first needed (most grants never hand over). */
  private readonly opening?: CohortOpening;
  /** Renewed since the opening: the Redis lease then ends at `expiresAt`. */
  private renewedSinceOpening = false;
  /** Set when a cohort ended at its bound: this process' next waiter yields this long (ms). */
  yieldOnEnd = 0;
  /** @internal The deadline (Deadline): the local end or maxHoldMs, whichever is first. */
  at = Infinity;
  /** @internal */
  slot = -1;

  readonly kind: LockKind;
  /** The user key, exactly as given. */
  readonly key: string;
  readonly names: LockKeyNames;
  /** The owner id written to Redis (shared by a cohort's grants). */
  readonly owner: string;
  readonly fencingToken: number;
  readonly options: LockOptions;

  constructor(
    readonly held: HeldLocks,
    spec: GrantSpec,
  ) {
    this.kind = spec.kind;
    this.key = spec.key;
    this.names = spec.names;
    this.owner = spec.owner;
    this.fencingToken = spec.fencingToken;
    this.options = spec.options;
    this.leaseMs = spec.leaseMs;
    this.watchdog = spec.watchdog;
    this.replicaAcks = spec.replicaAcks;
    const requestedAt = spec.requestedAt;
    this.grantedAt = spec.grantedAt ?? requestedAt;
    const cohort = spec.cohort;
    if (cohort instanceof Cohort) this.cohortState = cohort;
    else this.opening = cohort;
    this.expiresAt = requestedAt + spec.leaseMs;
    this.localEnd = this.expiresAt - leaseDriftMs(spec.leaseMs);
    this.holdDeadline =
      spec.options.maxHoldMs === undefined ? Infinity : requestedAt + spec.options.maxHoldMs;
    this.schedule();
  }

  /** The per-process cohort of this grant (cohort kinds), built on first use. */
  get cohort(): Cohort | undefined {
    if (!this.cohortState && this.opening) {
      // A fresh cohort grant was granted when its request was sent (grantedAt is requestedAt).
      this.cohortState = new Cohort(this.opening, this.fencingToken, this.grantedAt);
      if (this.renewedSinceOpening) this.cohortState.redisExpiresAt = this.expiresAt;
    }
    return this.cohortState;
  }

  /** The hold that keeps the Redis lock of this grant's cohort, if it has one. */
  get cohortHoldId(): string | undefined {
    return this.cohortState?.holdId ?? this.opening?.holdId;
  }

  /** The scope key of this grant's critical sections (engine id + lock name). */
  get scopeKey(): string {
    return `${this.held.engineId}|${this.names.lock}`;
  }

  /** The signal shared by the handles of this grant; aborted with LockLostError on a loss. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  get active(): boolean {
    return !this.ended && !this.lost;
  }

  /** The lease a renewal sent at `sentAt` asks for: never past maxHoldMs (0: do not renew). */
  renewalLeaseMs(sentAt: number, leaseMs = this.leaseMs): number {
    return Math.max(0, Math.min(leaseMs, this.holdDeadline - sentAt));
  }

  /** Moves the lease end (after a renewal sent at `sentAt`) and the deadline with it. */
  renewed(sentAt: number, leaseMs: number): void {
    this.expiresAt = sentAt + leaseMs;
    this.localEnd = this.expiresAt - leaseDriftMs(leaseMs);
    if (this.cohortState) this.cohortState.redisExpiresAt = this.expiresAt;
    else if (this.opening) this.renewedSinceOpening = true;
    if (this.active) this.schedule();
  }

  /**
   * A re-entry sent at `sentAt` moved the lease in Redis to at least `sentAt + leaseMs` (the acquire
   * scripts never shorten it): the local lease end follows, so handle and Redis agree.
   */
  reentered(sentAt: number): void {
    if (this.active && sentAt + this.leaseMs > this.expiresAt) this.renewed(sentAt, this.leaseMs);
  }

  /** Marks the grant lost: aborts the signal at once and stops its deadline and renewals. */
  lose(reason: LockLostReason, cause?: unknown): void {
    if (this.lost || this.ended) return;
    this.lost = new LockLostError(this.key, reason, cause);
    deadlines.remove(this);
    // Built now if nobody asked for the signal yet, so a later handle.signal is already aborted.
    this.controller ??= new AbortController();
    this.controller.abort(this.lost);
    this.held.ended(this, this.lost);
  }

  /** Ends the grant after its last release: no deadline, no renewals. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    deadlines.remove(this);
    this.held.ended(this);
  }

  /** @internal The deadline passed: the lease ended locally (or maxHoldMs did). */
  expire(): void {
    this.lose(this.at === this.holdDeadline ? 'max-hold' : 'expired');
  }

  private schedule(): void {
    // A watchdog lease is renewed before its local end; when no renewal came back in time (a hanging
    // connection), this deadline ends it there. maxHoldMs ends any grant on purpose.
    this.at = Math.min(this.localEnd, this.holdDeadline);
    deadlines.schedule(this);
  }
}

/** A held lock. One handle per acquire; a re-entry gets its own handle on the same grant. */
export interface LockHandle {
  /** The user key, exactly as given. */
  readonly key: string;
  /** Strictly increases across all holders of this lock (a key and its kind); hand it to storage that rejects stale writers. */
  readonly fencingToken: number;
  /** Aborted (reason: LockLostError) the moment the lock is known lost. Not aborted by a normal release. */
  readonly signal: AbortSignal;
  /** Replicas that acknowledged the grant (Sentinel with `WAIT`); undefined when not asked for. */
  readonly replicaAcks?: number;
  /** Releases this hold. Resolves false, never throws, when it was no longer held (or Redis failed). */
  release(): Promise<boolean>;
  /** Extends the lease (default: the lease it was taken with). Throws LockLostError when no longer held. */
  extend(leaseMs?: number): Promise<void>;
  /** Milliseconds left of the lease by this process' monotonic clock, drift allowance deducted (0 when lost or released). */
  remainingMs(): number;
  /** True until released or lost. */
  readonly isHeld: boolean;
}

/** The handle of one hold on a grant. */
export class GrantHandle implements LockHandle {
  private released = false;

  constructor(
    readonly grant: LockGrant,
    readonly holdId: string,
  ) {
    grant.openHolds.add(holdId);
  }

  get key(): string {
    return this.grant.key;
  }
  get fencingToken(): number {
    return this.grant.fencingToken;
  }
  get signal(): AbortSignal {
    return this.grant.signal;
  }
  get replicaAcks(): number | undefined {
    return this.grant.replicaAcks;
  }
  get isHeld(): boolean {
    return !this.released && this.grant.active;
  }

  remainingMs(): number {
    return this.isHeld ? Math.max(0, this.grant.localEnd - monotonicMs()) : 0;
  }

  release(): Promise<boolean> {
    if (this.released) return Promise.resolve(false);
    this.released = true;
    return this.grant.held.release(this.grant, this.holdId);
  }

  async extend(leaseMs?: number): Promise<void> {
    // The same check as the leaseMs option, before any I/O: a bad value never reaches Redis or the
    // local deadline (0 or -1 would end the lease locally while Redis keeps it).
    if (leaseMs !== undefined) assertDuration(leaseMs, 'leaseMs', 1);
    const g = this.grant;
    if (this.released || g.ended) throw new LockLostError(g.key, 'expired');
    if (g.lost) throw g.lost;
    await g.held.extend(g, leaseMs ?? g.leaseMs);
  }
}
