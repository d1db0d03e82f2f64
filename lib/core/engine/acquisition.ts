import { LockError, LockNotAcquiredError } from '../errors';
import type { AttemptResult, LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { linkSignals } from '../waiting/abort';
import type { HandoffTarget, LocalWaitQueues, Ticket } from '../waiting/wait-queue';
import type { Wakeups } from '../waiting/wakeup-hub';
import { withDeadline } from '../waiting/with-deadline';
import { kindName, type HeldLocks } from './held-locks';
import { monotonicMs, randomId } from './ids';
import type { LockKeyNames } from './key-space';
import type { WakeupChannels } from './lock-backend';
import type { LockEvents } from './lock-events';
import { LockGrant } from './lock-grant';
import { GrantHandle, LockHandle } from './lock-handle';
import { Cohort } from './cohort';

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

type Failure = 'timeout' | 'aborted' | 'closed' | 'error';

/**
 * One acquisition's wait: only the head of the process' local queue attempts (shared kinds let
 * every waiter try), a waiter sleeps on pub/sub wake-ups with exponential backoff as the safety net,
 * and every Redis command is bounded by what is left of `waitMs`.
 */
export class Acquisition {
  private readonly owner: string;
  private readonly holdId = randomId();
  private readonly started = monotonicMs();
  private readonly deadline: number;
  private readonly kindLabel: string;
  private readonly ticket: Ticket;
  // The linked signal (an AbortController and two listeners) is built only when the call has to
  // wait; a first attempt that wins never pays for it.
  private link?: { signal: AbortSignal; unlink: () => void };
  private wake?: Wakeups;
  private attempts = 0;
  private retryAfterMs = -1;
  /** Why the lock was busy when it is more than "held" (e.g. a RedLock split vote), for the error. */
  private busyReason?: string;
  private backoffMs: number;
  private acquired = false;
  /** When the latest attempt was sent: a lease is counted from before the request that won it. */
  private requestedAt = 0;
  /** A lock handed over by a local holder of the same process (cohorts), not yet taken. */
  private handed?: GrantHandle;
  /** Set once run() has settled: later hand-offs are refused. */
  private settled = false;
  /** Cohort kinds: local waiters wait for the local holder instead of polling Redis. */
  private readonly cohortKind: boolean;
  private reportedLocal = false;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
  ) {
    // The engine id prefixes the owner id, so a script can tell this process' owners apart.
    this.owner = `${ctx.held.engineId}.${randomId()}`;
    this.deadline = this.started + req.waitMs;
    this.kindLabel = kindName(req.kind, req.options);
    this.backoffMs = ctx.backoff.initialMs;
    this.ticket = ctx.queues.enter(req.names.lock, req.kind.isExclusive?.(req.options) ?? req.kind.exclusive);
    this.cohortKind = req.kind.cohorts === true && ctx.reserveTokens > 1;
    if (this.cohortKind) {
      this.ticket.handoff = {
        options: req.options,
        accepts: (grant: LockGrant) => this.acceptsHandoff(grant),
        receive: (handle: GrantHandle) => {
          this.handed = handle;
          this.wake?.wake();
        },
      } as HandoffTarget<LockGrant, GrantHandle> & { options: LockOptions };
      this.ticket.onFree = () => this.wake?.wake();
    }
  }

  /** Waits for the lock: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<LockHandle | null> {
    try {
      let attemptNow = this.ticket.takeAttemptNow();
      while (!this.aborted()) {
        if (this.handed) return this.takeHanded();
        if (!this.ticket.isHead) {
          const turn = await this.waitForTurn();
          if (turn === 'aborted') break;
          if (turn === 'timeout') return this.timedOut();
          attemptNow = turn === 'attempt-now';
        }
        if (!attemptNow || this.mustWaitLocally()) {
          const slept = await this.sleep();
          if (this.handed) return this.takeHanded();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
          if (this.mustWaitLocally()) continue;
        }
        attemptNow = false;
        const result = await this.attempt();
        if (result.status === 'granted') return await this.grant(result);
        if (this.handed) return this.takeHanded();
        this.noteBusy(result);
        if (this.remaining() <= 0) return this.timedOut();
        if (!this.wake) {
          // Subscribe, then try once more at once: a release between our attempt and the
          // subscription would otherwise only be noticed by the backoff.
          if (!(await this.join())) return this.timedOut();
          attemptNow = true;
        }
      }
      return this.abortedOut();
    } finally {
      this.cleanUp();
    }
  }

  /** This process holds the lock (a cohort kind): wait to be told locally, no Redis attempt now. */
  private mustWaitLocally(): boolean {
    if (!this.cohortKind || !this.ctx.held.holdsLocally(this.req.names.lock)) return false;
    // Contention all the same, only settled in this process: reported once per wait.
    if (!this.reportedLocal) {
      this.reportedLocal = true;
      this.ctx.events.safeEmit('contended', { key: this.req.key, kind: this.kindLabel, retryAfterMs: -1 });
    }
    return true;
  }

  private acceptsHandoff(grant: LockGrant): boolean {
    const o = this.req.options;
    return (
      !this.settled &&
      !this.handed &&
      !this.aborted() &&
      this.ticket.isHead &&
      grant.kind === this.req.kind &&
      this.req.watchdog &&
      o.minHoldMs === undefined &&
      o.maxHoldMs === undefined
    );
  }

  /** Takes the lock a local holder handed over. */
  private takeHanded(): LockHandle {
    const handle = this.handed!;
    this.handed = undefined;
    this.acquired = true;
    this.ctx.events.safeEmit('acquired', {
      key: this.req.key,
      kind: this.kindLabel,
      waitedMs: monotonicMs() - this.started,
      attempts: this.attempts,
      reentered: false,
      fencingToken: handle.fencingToken,
      handedOver: true,
    });
    return handle;
  }

  private remaining(): number {
    return this.deadline - monotonicMs();
  }

  private aborted(): boolean {
    return this.req.options.signal?.aborted === true || this.ctx.closing.aborted;
  }

  private waitSignal(): AbortSignal {
    return (this.link ??= linkSignals(this.req.options.signal, this.ctx.closing)).signal;
  }

  /** Subscribes to the lock's channel, within what is left of the wait; false when the wait ran out. */
  private async join(): Promise<boolean> {
    const joining = this.ctx.hub.join(this.req.names.channel);
    this.wake = await withDeadline(joining, Math.max(1, this.remaining()));
    if (!this.wake)
      joining.then(
        (w) => w.leave(),
        () => undefined,
      );
    return this.wake !== undefined;
  }

  /** A waiter behind the local head: waits to become head. */
  private async waitForTurn(): Promise<'attempt-now' | 'sleep' | 'timeout' | 'aborted'> {
    if (!this.wake && !(await this.join())) return 'timeout';
    if (!(await this.ticket.turn(Math.max(0, this.remaining()), this.waitSignal()))) {
      return this.aborted() ? 'aborted' : 'timeout';
    }
    this.backoffMs = this.ctx.backoff.initialMs;
    if (this.ticket.takeAttemptNow()) return 'attempt-now';
    // Promoted because the predecessor just won: wake-ups seen before that are stale.
    this.wake!.discardPending();
    return 'sleep';
  }

  /**
   * Sleeps until a wake-up, the backoff, the holder's lease end or the deadline. A cohort kind's
   * busy attempt recorded this waiter in Redis (the release will publish), and a local holder tells
   * its waiters itself: both sleep on the message with the longest backoff as the safety net, not
   * 1-2-4 ms polling.
   */
  private async sleep(): Promise<'woken' | 'timeout' | 'aborted'> {
    if (this.remaining() <= 0) return 'timeout';
    if (!this.wake && !(await this.join())) return 'timeout';
    const holderLeft = this.retryAfterMs >= 0 ? this.retryAfterMs + 1 : Infinity;
    const step = this.cohortKind ? this.ctx.backoff.maxMs : this.backoffMs;
    const ms = Math.max(1, Math.min(step, holderLeft, this.remaining()));
    await this.wake!.wait(ms, this.waitSignal());
    this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.backoff.maxMs);
    return this.aborted() ? 'aborted' : 'woken';
  }

  private async attempt(): Promise<AttemptResult> {
    this.attempts++;
    this.requestedAt = monotonicMs();
    const { key, names, options, leaseMs } = this.req;
    try {
      return await this.req.kind.attempt({
        key,
        names,
        owner: this.owner,
        holdId: this.holdId,
        leaseMs,
        reenter: false,
        options,
        timeoutMs: Math.max(1, this.remaining()) + ATTEMPT_MARGIN_MS,
        ...(this.cohortKind && { reserveTokens: this.ctx.reserveTokens, process: this.ctx.held.engineId }),
      });
    } catch (err) {
      this.fail('error');
      throw err;
    }
  }

  private noteBusy(result: Exclude<AttemptResult, { status: 'granted' }>): void {
    this.retryAfterMs = result.status === 'busy' ? result.retryAfterMs : -1;
    this.busyReason = result.status === 'busy' ? result.reason : undefined;
    this.ctx.events.safeEmit('contended', {
      key: this.req.key,
      kind: this.kindLabel,
      retryAfterMs: this.retryAfterMs,
    });
  }

  private async grant(result: Extract<AttemptResult, { status: 'granted' }>): Promise<LockHandle> {
    this.acquired = true;
    const { key, names, kind, options, leaseMs, watchdog } = this.req;
    const requestedAt = this.requestedAt;
    const token = result.fencingToken;
    const cohort =
      this.cohortKind && watchdog && !result.reentered
        ? new Cohort(this.holdId, token + 1, token + this.ctx.reserveTokens - 1, requestedAt)
        : undefined;
    const grant = new LockGrant(this.ctx.held, kind, key, names, this.owner, token, options, {
      leaseMs,
      watchdog,
      requestedAt,
      replicaAcks: result.replicaAcks,
      cohort,
    });
    const handle = new GrantHandle(grant, this.holdId);
    this.ctx.held.add(grant);
    if (this.ctx.isClosed()) {
      await handle.release();
      throw new LockError('The lock service is closed', key);
    }
    this.ctx.events.safeEmit('acquired', {
      key,
      kind: this.kindLabel,
      waitedMs: requestedAt - this.started,
      attempts: this.attempts,
      reentered: false,
      fencingToken: result.fencingToken,
      ...(result.replicaAcks !== undefined && { replicaAcks: result.replicaAcks }),
    });
    return handle;
  }

  private fail(reason: Failure): void {
    this.ctx.events.safeEmit('notAcquired', {
      key: this.req.key,
      kind: this.kindLabel,
      waitedMs: monotonicMs() - this.started,
      attempts: this.attempts,
      reason,
      tryOnly: this.req.tryOnly,
    });
  }

  private timedOut(): LockHandle | null {
    if (this.handed) return this.takeHanded();
    this.fail('timeout');
    if (this.req.tryOnly) return null;
    const waited = monotonicMs() - this.started;
    const reason = this.busyReason && `${this.busyReason}; gave up after ${Math.round(waited)} ms`;
    const expected = this.ctx.retryAfter(this.req.key, this.retryAfterMs);
    throw new LockNotAcquiredError(this.req.key, waited, this.retryAfterMs, reason, expected);
  }

  /** Aborted: by the caller's signal, or by close(). */
  private abortedOut(): never {
    const signal = this.req.options.signal;
    if (this.ctx.closing.aborted && !signal?.aborted) {
      this.fail('closed');
      throw new LockNotAcquiredError(
        this.req.key,
        monotonicMs() - this.started,
        this.retryAfterMs,
        'the lock service is shutting down',
      );
    }
    this.fail('aborted');
    throw signal!.reason;
  }

  private cleanUp(): void {
    this.settled = true;
    // Handed over while this call gave up (abort, error): release it in Redis.
    if (this.handed) void this.handed.release();
    this.link?.unlink();
    this.ticket.leave(this.acquired);
    this.wake?.leave();
    // Kinds that queue waiters in Redis drop this one's entry now instead of at its deadline.
    const { kind, key, names, options, leaseMs } = this.req;
    if (!this.acquired && this.attempts > 0 && kind.abandon) {
      void kind.abandon({
        key,
        names,
        owner: this.owner,
        holdId: this.holdId,
        leaseMs,
        reenter: false,
        options,
      });
    }
  }
}
