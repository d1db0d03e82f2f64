import { LockLostError, LockLostReason } from '../errors';
import type { LockKeyNames } from '../kinds/key-space';
import type { LockKind, RenewRequest } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import type { Deadline } from '../runtime/deadlines';
import type { KeptContext, Runtime } from '../runtime/runtime';
import { localLeaseEnd } from '../runtime/lease-drift';
import { Cohort, type CohortOpening } from './cohort';
import { OpenHolds } from './open-holds';

/**
 * What a grant reports to, handed over when it is built: the engine's held locks (HeldLocks,
 * held-locks.ts). It is told when the grant ended, and runs the releases and extends of its handles.
 */
export interface GrantKeeper {
  /** The engine whose locks these are (part of a grant's scope key). */
  readonly engineId: string;
  /** The engine's clocks and timers: a grant's local end is a deadline on its heap. */
  readonly runtime: Runtime;
  /** A grant ended (released, or lost with `lost`). */
  ended(grant: LockGrant, lost?: LockLostError): void;
  /** Releases one hold of `grant` (the one release path). */
  release(grant: LockGrant, holdId: string): Promise<boolean>;
  /** Renews `grant` for `leaseMs` (a handle's extend()). */
  extend(grant: LockGrant, leaseMs: number): Promise<void>;
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
 * allowance, or `maxHoldMs`) is a deadline on the runtime's one timer; a renewal moves it.
 */
export class LockGrant implements Deadline {
  /** Created on first use (handle.signal or a loss): most grants never need one. */
  private controller?: AbortController;
  /** The async context of the call this grant was given to (heldBy): its loss is told there. */
  private holderContext?: KeptContext;
  readonly openHolds = new OpenHolds();
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
  /** Monotonic time the request behind `expiresAt` was sent: the grant's, or the last renewal's. */
  private leaseSentAt: number;
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
    /** The engine's held locks (HeldLocks): told when this grant ends; its handles release through it. */
    readonly held: GrantKeeper,
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
    this.leaseSentAt = requestedAt;
    this.expiresAt = requestedAt + spec.leaseMs;
    this.localEnd = localLeaseEnd(requestedAt, spec.leaseMs);
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

  /**
   * The lease a renewal sent at `sentAt` asks for: never past maxHoldMs (0: do not renew). Whole
   * milliseconds: what is left of maxHoldMs is measured on the monotonic clock, in fractions, and the
   * scripts take whole ones (they refused a fraction, and the lock was reported lost).
   */
  renewalLeaseMs(sentAt: number, leaseMs = this.leaseMs): number {
    return Math.max(0, Math.min(leaseMs, Math.floor(this.holdDeadline - sentAt)));
  }

  /**
   * What renews this grant for `leaseMs` from `sentAt` (0: checks that Redis still has it). A reply
   * after the local lease end could not be trusted any more: the call is bounded by the lease left.
   */
  renewRequest(sentAt: number, leaseMs: number): RenewRequest {
    return {
      key: this.key,
      names: this.names,
      owner: this.owner,
      holdId: '',
      options: this.options,
      leaseMs,
      timeoutMs: Math.max(1, this.localEnd - sentAt),
      holdIds: [...this.openHolds],
    };
  }

  /** Moves the lease end (after a renewal sent at `sentAt`) and the deadline with it. */
  renewed(sentAt: number, leaseMs: number): void {
    // A reply to a renewal sent before the one behind the lease comes late (a RedLock or Cluster batch
    // waits for its slowest node): Redis ran it first, and the later lease stands there (an extend()
    // that shortened it). So it may only shorten the lease here; where the order is not certain, the
    // sooner end is the safe one.
    if (sentAt < this.leaseSentAt) {
      if (sentAt + leaseMs >= this.expiresAt) return;
    } else {
      this.leaseSentAt = sentAt;
    }
    this.expiresAt = sentAt + leaseMs;
    this.localEnd = localLeaseEnd(sentAt, leaseMs);
    if (this.cohortState) this.cohortState.redisExpiresAt = this.expiresAt;
    else if (this.opening) this.renewedSinceOpening = true;
    if (this.active) this.schedule();
  }

  /**
   * A renewal for `leaseMs` sent at `sentAt` got no answer and may have run: when it would have
   * shortened the lease (an extend() to less than is left), the lease ends at its end here too.
   */
  mayHaveRenewed(sentAt: number, leaseMs: number): void {
    if (sentAt + leaseMs < this.expiresAt) this.renewed(sentAt, leaseMs);
  }

  /**
   * A re-entry sent at `sentAt` moved the lease in Redis to at least `sentAt + leaseMs` (the acquire
   * scripts never shorten it): the local lease end follows, so handle and Redis agree.
   */
  reentered(sentAt: number): void {
    if (this.active && sentAt + this.leaseMs > this.expiresAt) this.renewed(sentAt, this.leaseMs);
  }

  /**
   * The grant is given to the call that asked for it, in that call's async context: kept, so that
   * its loss is told there (abort listeners, the `lost` event and what logs or traces it), whatever
   * found the loss. A renewal round, a notice or another request's forceRelease run elsewhere.
   */
  heldBy(context: KeptContext): void {
    this.holderContext = context;
  }

  /** Marks the grant lost: aborts the signal at once and stops its deadline and renewals. */
  lose(reason: LockLostReason, cause?: unknown): void {
    if (this.lost || this.ended) return;
    this.lost = new LockLostError(this.key, reason, cause);
    this.held.runtime.deadlines.remove(this);
    // Built now if nobody asked for the signal yet, so a later handle.signal is already aborted.
    this.controller ??= new AbortController();
    if (this.holderContext) this.holderContext.runInAsyncScope(this.tellLoss, this);
    else this.tellLoss();
  }

  /** Aborts the signal and reports the loss (in the holder's context: see heldBy). */
  private tellLoss(): void {
    // Let go of the holder's context (its request's stores): a handle kept after the call keeps this grant.
    this.holderContext = undefined;
    this.controller!.abort(this.lost);
    this.held.ended(this, this.lost);
  }

  /** Ends the grant after its last release: no deadline, no renewals. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.holderContext = undefined;
    this.held.runtime.deadlines.remove(this);
    this.held.ended(this);
  }

  /** @internal The deadline passed: the lease ended locally (or maxHoldMs did). */
  expire(): void {
    // A lease that maxHoldMs capped (the last renewal or extend() could go no further) ends there on
    // purpose: 'max-hold', though its drift allowance makes it end locally a little before.
    const capped = this.expiresAt >= this.holdDeadline - 1;
    this.lose(this.at === this.holdDeadline || capped ? 'max-hold' : 'expired');
  }

  private schedule(): void {
    // A watchdog lease is renewed before its local end; when no renewal came back in time (a hanging
    // connection), this deadline ends it there. maxHoldMs ends any grant on purpose.
    this.at = Math.min(this.localEnd, this.holdDeadline);
    this.held.runtime.deadlines.schedule(this);
  }
}
