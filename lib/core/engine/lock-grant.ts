import { LockLostError, LockLostReason } from '../errors';
import { monotonicMs } from './ids';
import { leaseDriftMs } from './lease-drift';
import type { LockKeyNames } from '../kinds/key-space';
import type { HoldRef, LockKind, ReleaseResult } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import type { Cohort } from './cohort';

/** What a grant needs from the engine that issued it (HeldLocks). */
export interface GrantHost {
  readonly engineId: string;
  onGrantEnded(grant: LockGrant): void;
  onReleased(grant: LockGrant, result: ReleaseResult | 'failed', error?: unknown): void;
  /** Retries a release that failed on a Redis error, in the background, until `untilMonotonic`. */
  retryRelease(grant: LockGrant, hold: HoldRef, untilMonotonic: number): void;
  onLost(grant: LockGrant, error: LockLostError): void;
  /** Hands the lock to a local waiter instead of releasing it in Redis (cohorts); false: release. */
  handOff(grant: LockGrant): boolean;
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
  /** The per-process cohort this grant belongs to (kinds that reserve tokens). */
  readonly cohort?: Cohort;
}

/**
 * One grant of a lock by Redis: owner, fencing token, lease and the signal shared by the handles of
 * its holds (the first acquire and every re-entry).
 */
export class LockGrant {
  /** Created on first use (handle.signal or a loss): most grants never need one. */
  private controller?: AbortController;
  readonly openHolds = new Set<string>();
  readonly scopeKey: string;
  /** Monotonic time at which the lease runs out unless renewed (counted from before the request). */
  expiresAt: number;
  /**
   * Monotonic time at which this process considers the lease over: `expiresAt` minus the drift
   * allowance (lease-drift.ts), so the holder is told before Redis can grant the lock to anyone else.
   */
  localEnd: number;
  /** Monotonic time the granting request was sent. */
  readonly grantedAt: number;
  lost?: LockLostError;
  ended = false;
  private expiryTimer?: NodeJS.Timeout;
  /** The lease in ms. */
  readonly leaseMs: number;
  /** True when the watchdog renews the lease. */
  readonly watchdog: boolean;
  readonly replicaAcks?: number;
  /** Monotonic time after which the lock is not renewed any more (maxHoldMs); Infinity without. */
  readonly holdDeadline: number;
  readonly cohort?: Cohort;
  /** Set when a cohort ended at its bound: this process' next waiter yields this long (ms). */
  yieldOnEnd = 0;

  readonly kind: LockKind;
  /** The user key, exactly as given. */
  readonly key: string;
  readonly names: LockKeyNames;
  /** The owner id written to Redis (shared by a cohort's grants). */
  readonly owner: string;
  readonly fencingToken: number;
  readonly options: LockOptions;

  constructor(
    readonly host: GrantHost,
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
    this.scopeKey = `${host.engineId}|${spec.names.lock}`;
    this.grantedAt = spec.grantedAt ?? requestedAt;
    this.cohort = spec.cohort;
    this.expiresAt = requestedAt + spec.leaseMs;
    this.localEnd = this.expiresAt - leaseDriftMs(spec.leaseMs);
    this.holdDeadline =
      spec.options.maxHoldMs === undefined ? Infinity : requestedAt + spec.options.maxHoldMs;
    if (!spec.watchdog || this.holdDeadline < Infinity) this.armExpiry();
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
   * The next holder of a cohort: the same Redis lock (owner), a new grant with its own token, signal
   * and async context. A watchdog successor keeps the lease end; a fixed-lease one gets its own
   * `leaseMs` from `now` (the caller checked that the Redis lease covers it). The caller ends this grant.
   */
  successor(fencingToken: number, now: number, options: LockOptions, leaseMs: number): LockGrant {
    return new LockGrant(this.host, {
      kind: this.kind,
      key: this.key,
      names: this.names,
      owner: this.owner,
      fencingToken,
      options,
      leaseMs: this.watchdog ? this.leaseMs : leaseMs,
      watchdog: this.watchdog,
      requestedAt: this.watchdog ? this.expiresAt - this.leaseMs : now,
      grantedAt: now,
      // The Redis grant this holder rides on is the one the replicas acknowledged.
      replicaAcks: this.replicaAcks,
      cohort: this.cohort,
    });
  }

  /** The lease a renewal sent at `sentAt` asks for: never past maxHoldMs (0: do not renew). */
  renewalLeaseMs(sentAt: number, leaseMs = this.leaseMs): number {
    return Math.max(0, Math.min(leaseMs, this.holdDeadline - sentAt));
  }

  /** Moves the lease end (after a renewal sent at `sentAt`) and re-arms the expiry timer. */
  renewed(sentAt: number, leaseMs: number): void {
    this.expiresAt = sentAt + leaseMs;
    this.localEnd = this.expiresAt - leaseDriftMs(leaseMs);
    if (this.cohort) this.cohort.redisExpiresAt = this.expiresAt;
    if (!this.watchdog || this.holdDeadline < Infinity) this.armExpiry();
  }

  /**
   * A re-entry sent at `sentAt` moved the lease in Redis to at least `sentAt + leaseMs` (the acquire
   * scripts never shorten it): the local lease end follows, so handle and Redis agree.
   */
  reentered(sentAt: number): void {
    if (this.active && sentAt + this.leaseMs > this.expiresAt) this.renewed(sentAt, this.leaseMs);
  }

  /** Marks the grant lost: aborts the signal at once and stops timers and renewals. */
  lose(reason: LockLostReason, cause?: unknown): void {
    if (this.lost || this.ended) return;
    this.lost = new LockLostError(this.key, reason, cause);
    this.stop();
    // Built now if nobody asked for the signal yet, so a later handle.signal is already aborted.
    this.controller ??= new AbortController();
    this.controller.abort(this.lost);
    this.host.onLost(this, this.lost);
  }

  /**
   * Releases one hold in Redis: the path of every release (handles, and close()). Resolves false,
   * never throws, when the hold was no longer held or Redis failed (then retried in the background
   * until the lease would have ended anyway: a failover can outlast one command timeout).
   */
  async releaseHold(holdId: string): Promise<boolean> {
    if (!this.openHolds.delete(holdId)) return false; // already released (e.g. by close())
    // A grant this process already reported lost (its lease ended locally, drift allowance included)
    // is cleaned up in Redis all the same, but the release says "not held": handle and answer agree.
    const reportedLost = this.lost !== undefined;
    const last = this.openHolds.size === 0;
    const base = { key: this.key, names: this.names, owner: this.owner, holdId, options: this.options };
    const keepMs = this.grantedAt + (this.options.minHoldMs ?? 0) - monotonicMs();
    if (keepMs >= 1 && last && this.active) return this.keepUntilMinHold(base, keepMs);
    if (last && holdId === this.cohort?.holdId && this.host.handOff(this)) return true;
    // A cohort that ended at its bound (handOff set yieldOnEnd) lets the other processes' waiters go first.
    const hold: HoldRef =
      this.yieldOnEnd > 0 ? { ...base, yieldTo: { process: this.host.engineId, ms: this.yieldOnEnd } } : base;
    let result: ReleaseResult;
    try {
      result = await this.kind.release(hold);
    } catch (err) {
      const leaseEnd = this.expiresAt;
      if (this.openHolds.size === 0) this.end();
      this.host.onReleased(this, 'failed', err);
      this.host.retryRelease(this, hold, leaseEnd);
      return false;
    }
    if (result === 'not-held') this.lose('expired');
    if (result === 'released' || this.openHolds.size === 0) this.end();
    this.host.onReleased(this, result);
    return result !== 'not-held' && !reportedLost;
  }

  /**
   * The last release before minHoldMs: instead of deleting the lock, shorten (or stretch) its lease
   * so it ends exactly at grant + minHoldMs. The grant ends here; Redis lets the lock expire.
   */
  private async keepUntilMinHold(hold: HoldRef, keepMs: number): Promise<boolean> {
    let result: string;
    try {
      [result = 'gone'] = await this.kind.renew([{ ...hold, holdId: '', leaseMs: Math.ceil(keepMs) }]);
    } catch (err) {
      this.end();
      this.host.onReleased(this, 'failed', err);
      return false; // the lease ends it anyway
    }
    if (result !== 'renewed') this.lose('expired');
    this.end();
    this.host.onReleased(this, result === 'renewed' ? 'released' : 'not-held');
    return result === 'renewed';
  }

  /** Ends the grant after its last release: no timers, no renewals. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stop();
  }

  private stop(): void {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    this.host.onGrantEnded(this);
  }

  private armExpiry(): void {
    clearTimeout(this.expiryTimer);
    // A watchdog lease is renewed before it ends (its Watchdog ends it at localEnd when a renewal
    // does not come back in time); only maxHoldMs ends it on purpose here.
    const end = this.watchdog ? this.holdDeadline : Math.min(this.localEnd, this.holdDeadline);
    const reason = end === this.holdDeadline ? 'max-hold' : 'expired';
    const ms = Math.max(0, end - monotonicMs());
    this.expiryTimer = setTimeout(() => this.lose(reason), ms);
    this.expiryTimer.unref(); // a held lock alone must not keep a process alive
  }
}
