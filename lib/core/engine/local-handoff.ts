import type { LockOptions } from '../options/lock-options';
import type { HandoffTarget, Ticket } from '../waiting/wait-queue';
import type { AcquisitionContext, AcquisitionRequest } from './acquisition';
import type { LockGrant } from './lock-grant';
import type { GrantHandle } from './lock-handle';

/** A local waiter as a holder's release sees it: its options and the lease it asked for. */
export type LocalHandoffTarget = HandoffTarget<LockGrant, GrantHandle> & {
  readonly options: LockOptions;
  readonly leaseMs: number;
};

/** What the local hand-off needs from its waiter (its AcquisitionWait). */
export interface HandoffWaiter {
  aborted(): boolean;
  /** Wakes the waiter's sleep (a lock was handed over, or the local holder let go). */
  wake(): void;
  /** Reports contention on `key` (here: settled inside this process). */
  reportContention(key: string, retryAfterMs: number): void;
}

/**
 * One waiter's side of the cohort hand-off (cohort kinds only): its ticket accepts a lock handed over
 * by a local holder of the same process, and while this process holds the lock the waiter waits to
 * be told locally instead of polling Redis.
 */
export class LocalHandoff {
  /** A lock handed over by a local holder of the same process (cohorts), not yet taken. */
  private handed?: GrantHandle;
  /** Set once run() has settled: later hand-offs are refused. */
  private settled = false;
  private reportedLocal = false;
  /** Cohort kinds (and cohorts on): local waiters wait for the local holder instead of polling Redis. */
  readonly enabled: boolean;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
    private readonly ticket: Ticket,
    private readonly waiter: HandoffWaiter,
  ) {
    this.enabled = LocalHandoff.enabledFor(ctx, req);
    if (!this.enabled) return;
    ticket.handoff = {
      options: req.options,
      leaseMs: req.leaseMs,
      accepts: (grant: LockGrant) => this.accepts(grant),
      receive: (handle: GrantHandle) => {
        this.handed = handle;
        waiter.wake();
      },
    } as LocalHandoffTarget;
    ticket.onFree = () => waiter.wake();
  }

  /** Whether `req`'s waiters take part in cohorts: a cohort kind, and cohorts on (tokens to reserve). */
  static enabledFor(ctx: AcquisitionContext, req: AcquisitionRequest): boolean {
    return req.kind.cohorts === true && ctx.reserveTokens > 1;
  }

  /** A lock was handed over and not yet taken. */
  get pending(): boolean {
    return this.handed !== undefined;
  }

  /** Takes the lock a local holder handed over (call only when pending). */
  take(): GrantHandle {
    const handle = this.handed!;
    this.handed = undefined;
    return handle;
  }

  /** This process holds the lock (a cohort kind): wait to be told locally, no Redis attempt now. */
  mustWaitLocally(): boolean {
    if (!this.enabled || !this.ctx.held.holdsLocally(this.req.names.lock)) return false;
    // Contention all the same, only settled in this process: reported once per wait.
    if (!this.reportedLocal) {
      this.reportedLocal = true;
      this.waiter.reportContention(this.req.key, -1);
    }
    return true;
  }

  /** run() has settled: refuses later hand-offs. */
  settle(): void {
    this.settled = true;
    // Handed over while this call gave up (abort, error): release it in Redis.
    if (this.handed) void this.handed.release();
  }

  private accepts(grant: LockGrant): boolean {
    const o = this.req.options;
    return (
      !this.settled &&
      !this.handed &&
      !this.waiter.aborted() &&
      this.ticket.isHead &&
      grant.kind === this.req.kind &&
      // The same lease mode: a watchdog lock is renewed for as long as it is held, a fixed one is not.
      grant.watchdog === this.req.watchdog &&
      o.minHoldMs === undefined &&
      o.maxHoldMs === undefined
    );
  }
}
