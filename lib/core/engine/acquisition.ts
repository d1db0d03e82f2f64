import { LockServiceClosedError } from '../errors';
import type { AttemptResult } from '../kinds/lock-kind';
import type { Ticket } from '../waiting/wait-queue';
import { ATTEMPT_MARGIN_MS, type AcquisitionContext, type AcquisitionRequest } from './acquisition-context';
import { grantOf, holdRequest, type AcquisitionIds } from './acquisition-grant';
import { abortedOut, emitAcquired, emitNotAcquired, timedOut, type WaitSummary } from './acquisition-outcome';
import { AcquisitionWait } from './acquisition-wait';
import { kindName } from './held-locks';
import { monotonicMs, randomId } from './ids';
import { LocalHandoff } from './local-handoff';
import { GrantHandle, LockHandle } from './lock-handle';

/**
 * One acquisition's wait: only the head of the process' local queue attempts (shared kinds let
 * every waiter try), a waiter sleeps on pub/sub wake-ups with exponential backoff as the safety net,
 * and every Redis command is bounded by what is left of `waitMs`.
 */
export class Acquisition {
  private readonly ids: AcquisitionIds;
  private readonly started = monotonicMs();
  private readonly kindLabel: string;
  private readonly ticket: Ticket;
  /** Deadline, channel wake-ups, backoff and the signal that ends a sleep. */
  private readonly wait: AcquisitionWait;
  private attempts = 0;
  private retryAfterMs = -1;
  /** Why the lock was busy when it is more than "held" (e.g. a RedLock split vote), for the error. */
  private busyReason?: string;
  private acquired = false;
  /** When the latest attempt was sent: a lease is counted from before the request that won it. */
  private requestedAt = 0;
  /** Cohort kinds: local waiters wait for the local holder instead of polling Redis. */
  private readonly cohortKind: boolean;
  /** The cohort hand-off: a lock handed over by a local holder, and waiting locally. */
  private readonly local: LocalHandoff;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
  ) {
    // The engine id prefixes the owner id, so a script can tell this process' owners apart.
    this.ids = { owner: `${ctx.held.engineId}.${randomId()}`, holdId: randomId() };
    this.wait = new AcquisitionWait(ctx, req, this.started, this.ids.owner);
    this.kindLabel = kindName(req.kind, req.options);
    this.ticket = ctx.queues.enter(req.names.lock, req.kind.isExclusive?.(req.options) ?? req.kind.exclusive);
    this.cohortKind = req.kind.cohorts === true && ctx.reserveTokens > 1;
    this.local = new LocalHandoff(this.cohortKind, ctx, req, this.kindLabel, this.ticket, {
      aborted: () => this.wait.aborted(),
      wake: () => this.wait.wake(),
    });
  }

  /** Waits for the lock: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<LockHandle | null> {
    try {
      let attemptNow = this.ticket.takeAttemptNow();
      while (!this.wait.aborted()) {
        if (this.local.pending) return this.takeHanded();
        if (!this.ticket.isHead) {
          const turn = await this.wait.waitForTurn(this.ticket);
          if (turn === 'aborted') break;
          if (turn === 'timeout') return this.timedOut();
          attemptNow = turn === 'attempt-now';
        }
        if (!attemptNow || this.local.mustWaitLocally()) {
          const slept = await this.wait.sleep(this.retryAfterMs, this.cohortKind);
          if (this.local.pending) return this.takeHanded();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
          if (this.local.mustWaitLocally()) continue;
        }
        attemptNow = false;
        const result = await this.attempt();
        if (result.status === 'granted') return await this.grant(result);
        if (this.local.pending) return this.takeHanded();
        this.noteBusy(result);
        if (this.wait.remaining() <= 0) return this.timedOut();
        if (!this.wait.joined) {
          // Subscribe, then try once more at once: a release between our attempt and the
          // subscription would otherwise only be noticed by the backoff.
          if (!(await this.wait.join())) return this.timedOut();
          attemptNow = true;
        }
      }
      return this.abortedOut();
    } finally {
      this.cleanUp();
    }
  }

  /** Takes the lock a local holder handed over. */
  private takeHanded(): LockHandle {
    const handle = this.local.take();
    this.acquired = true;
    const waitedMs = monotonicMs() - this.started;
    emitAcquired(this.ctx.events, this.summary(), this.req.key, waitedMs, handle.fencingToken, {
      handedOver: true,
    });
    return handle;
  }

  /** This wait so far, for its outcome. */
  private summary(): WaitSummary {
    return {
      key: this.req.key,
      kindLabel: this.kindLabel,
      started: this.started,
      attempts: this.attempts,
      tryOnly: this.req.tryOnly,
      retryAfterMs: this.retryAfterMs,
    };
  }

  private async attempt(): Promise<AttemptResult> {
    this.attempts++;
    this.requestedAt = monotonicMs();
    try {
      return await this.req.kind.attempt({
        ...holdRequest(this.req, this.ids),
        timeoutMs: Math.max(1, this.wait.remaining()) + ATTEMPT_MARGIN_MS,
        ...(this.cohortKind && { reserveTokens: this.ctx.reserveTokens, process: this.ctx.held.engineId }),
      });
    } catch (err) {
      emitNotAcquired(this.ctx.events, this.summary(), 'error');
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
    const { key } = this.req;
    const requestedAt = this.requestedAt;
    const token = result.fencingToken;
    const grant = grantOf(this.ctx, this.req, this.ids, result, requestedAt, this.cohortKind);
    const handle = new GrantHandle(grant, this.ids.holdId);
    this.ctx.held.add(grant);
    if (this.ctx.isClosed()) {
      await handle.release();
      throw new LockServiceClosedError('closed', key);
    }
    const acks = result.replicaAcks !== undefined ? { replicaAcks: result.replicaAcks } : undefined;
    emitAcquired(this.ctx.events, this.summary(), key, requestedAt - this.started, token, acks);
    return handle;
  }

  private timedOut(): LockHandle | null {
    if (this.local.pending) return this.takeHanded();
    return timedOut(
      this.ctx,
      this.summary(),
      (waited) => this.busyReason && `${this.busyReason}; gave up after ${Math.round(waited)} ms`,
    );
  }

  /** Aborted: by the caller's signal, or by close(). */
  private abortedOut(): never {
    return abortedOut(this.ctx, this.req.options.signal, this.summary());
  }

  private cleanUp(): void {
    this.local.settle();
    this.wait.unlink();
    this.ticket.leave(this.acquired);
    this.wait.leave();
    // Kinds that queue waiters in Redis drop this one's entry now instead of at its deadline.
    const { kind } = this.req;
    if (!this.acquired && this.attempts > 0 && kind.abandon)
      void kind.abandon(holdRequest(this.req, this.ids));
  }
}
