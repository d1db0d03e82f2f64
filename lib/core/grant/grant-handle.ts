import { LockLostError } from '../errors';
import { assertDuration } from '../options/validation';
import type { LockGrant } from './lock-grant';

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
    return this.isHeld ? Math.max(0, this.grant.localEnd - this.grant.held.runtime.now()) : 0;
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
