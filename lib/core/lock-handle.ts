import { LockLostError, LockLostReason } from './errors';
import { monotonicMs } from './ids';
import type { LockKeyNames } from './key-space';
import type { HoldRef, LockKind, ReleaseResult } from './lock-kind';
import type { LockOptions } from './lock-options';

/** A held lock. One handle per acquire; a re-entry gets its own handle on the same grant. */
export interface LockHandle {
  /** The user key, exactly as given. */
  readonly key: string;
  /** Strictly increases per key across all holders; hand it to storage that rejects stale writers. */
  readonly fencingToken: number;
  /** Aborted (reason: LockLostError) the moment the lock is known lost. Not aborted by a normal release. */
  readonly signal: AbortSignal;
  /** Replicas that acknowledged the grant (Sentinel with `WAIT`); undefined when not asked for. */
  readonly replicaAcks?: number;
  /** Releases this hold. Resolves false, never throws, when it was no longer held (or Redis failed). */
  release(): Promise<boolean>;
  /** Extends the lease (default: the lease it was taken with). Throws LockLostError when no longer held. */
  extend(leaseMs?: number): Promise<void>;
  /** Milliseconds left of the lease by this process' monotonic clock (0 when lost or released). */
  remainingMs(): number;
  /** True until released or lost. */
  readonly isHeld: boolean;
}

/** What a grant needs from the engine that issued it. */
export interface GrantHost {
  readonly engineId: string;
  onGrantEnded(grant: LockGrant): void;
  onReleased(grant: LockGrant, result: ReleaseResult | 'failed', error?: unknown): void;
  /** Retries a release that failed on a Redis error, in the background, until `untilMonotonic`. */
  retryRelease(grant: LockGrant, hold: HoldRef, untilMonotonic: number): void;
  onLost(grant: LockGrant, error: LockLostError): void;
  extend(grant: LockGrant, leaseMs: number): Promise<void>;
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
  /** Monotonic time at which the lease runs out unless renewed. */
  expiresAt: number;
  /** Monotonic time the granting request was sent. */
  readonly grantedAt: number;
  lost?: LockLostError;
  ended = false;
  private expiryTimer?: NodeJS.Timeout;

  constructor(
    readonly host: GrantHost,
    readonly kind: LockKind,
    readonly key: string,
    readonly names: LockKeyNames,
    readonly owner: string,
    readonly fencingToken: number,
    readonly options: LockOptions,
    /** The lease in ms; `watchdog` true when the watchdog renews it. */
    readonly leaseMs: number,
    readonly watchdog: boolean,
    requestedAt: number,
    readonly replicaAcks?: number,
  ) {
    this.scopeKey = `${host.engineId}|${names.lock}`;
    this.grantedAt = requestedAt;
    this.expiresAt = requestedAt + leaseMs;
    if (!watchdog) this.armExpiry();
  }

  /** The signal shared by the handles of this grant; aborted with LockLostError on a loss. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  get active(): boolean {
    return !this.ended && !this.lost;
  }

  /** Moves the lease end (after a renewal sent at `sentAt`) and re-arms the fixed-lease timer. */
  renewed(sentAt: number, leaseMs: number): void {
    this.expiresAt = sentAt + leaseMs;
    if (!this.watchdog) this.armExpiry();
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
    const ms = Math.max(0, this.expiresAt - monotonicMs());
    this.expiryTimer = setTimeout(() => this.lose('expired'), ms);
    this.expiryTimer.unref(); // a held lock alone must not keep a process alive
  }
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
    return this.isHeld ? Math.max(0, this.grant.expiresAt - monotonicMs()) : 0;
  }

  async release(): Promise<boolean> {
    if (this.released) return false;
    this.released = true;
    const g = this.grant;
    if (!g.openHolds.delete(this.holdId)) return false; // already released by close()
    const hold = { key: g.key, names: g.names, owner: g.owner, holdId: this.holdId, options: g.options };
    let result: ReleaseResult;
    try {
      result = await g.kind.release(hold);
    } catch (err) {
      // Never throw from a finally: report it, and keep trying in the background until the lease
      // would have ended anyway (a failover can outlast one command timeout).
      const leaseEnd = g.expiresAt;
      if (g.openHolds.size === 0) g.end();
      g.host.onReleased(g, 'failed', err);
      g.host.retryRelease(g, hold, leaseEnd);
      return false;
    }
    if (result === 'not-held') g.lose('expired');
    if (result === 'released' || g.openHolds.size === 0) g.end();
    g.host.onReleased(g, result);
    return result !== 'not-held';
  }

  async extend(leaseMs?: number): Promise<void> {
    const g = this.grant;
    if (this.released || g.ended) throw new LockLostError(g.key, 'expired');
    if (g.lost) throw g.lost;
    await g.host.extend(g, leaseMs ?? g.leaseMs);
  }
}
