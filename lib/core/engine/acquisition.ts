import { LockServiceClosedError } from '../errors';
import type { AttemptResult, LockKind } from '../kinds/lock-kind';
import type { KeySpace, LockKeyNames } from '../kinds/key-space';
import type { LockOptions, ResolvedEngineOptions } from '../options/lock-options';
import type { LocalWaitQueues, Ticket } from '../waiting/wait-queue';
import { ATTEMPT_MARGIN_MS } from '../waiting/with-deadline';
import { AcquisitionWait } from './acquisition-wait';
import { Cohort } from './cohort';
import type { HeldLocks } from './held-locks';
import { kindName } from './held-locks';
import { monotonicMs, randomId } from './ids';
import type { LockBackend, WakeupChannels } from './lock-backend';
import type { LockEvents } from './lock-events';
import { LockGrant } from './lock-grant';
import { LocalHandoff } from './local-handoff';
import { GrantHandle, LockHandle } from './lock-handle';

/** How many locks' "recorded as waiting" marks an engine keeps (see AcquisitionContext.recordedWaits). */
const MAX_RECORDED_WAITS = 4096;

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
  /**
   * A fixed-lease attempt with local waiters behind it asks Redis for this much more than its
   * `leaseMs` (the cohort budget), so the lock can be handed over locally with each successor's whole
   * lease covered (0: no cohorts).
   */
  readonly cohortLeaseExtraMs: number;
  /**
   * Locks on which a busy attempt of this process may have recorded it as a waiter in Redis: only
   * a grant of one of these needs to remove that record (the uncontended grant skips it).
   */
  readonly recordedWaits: Set<string>;
  /** Turns a busy holder's remaining lease into an honest "retry after" (see HoldTimes). */
  retryAfter(key: string, remainingLeaseMs: number): number;
  isClosed(): boolean;
}

/** The parts of an engine that single-key and multi-key locking share. */
export interface LockingParts {
  readonly engineId: string;
  readonly keys: KeySpace;
  readonly backend: LockBackend;
  readonly context: AcquisitionContext;
  readonly options: ResolvedEngineOptions;
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

/** Who asks: the owner id written to Redis, and this call's hold id. */
export interface AcquisitionIds {
  readonly owner: string;
  readonly holdId: string;
}

/**
 * One acquisition of one key: only the head of the process' local queue attempts (shared kinds let
 * every waiter try), a waiter sleeps on pub/sub wake-ups with exponential backoff as the safety net
 * (AcquisitionWait), a cohort kind's waiter takes a lock a local holder hands over (LocalHandoff),
 * and every Redis command is bounded by what is left of `waitMs`. A granted attempt becomes a
 * LockGrant, which opens a cohort when it is a fresh grant of a cohort kind.
 */
export class Acquisition {
  private readonly ids: AcquisitionIds;
  private readonly ticket: Ticket;
  private readonly wait: AcquisitionWait;
  /** Why the lock was busy when it is more than "held" (e.g. a RedLock split vote), for the error. */
  private busyReason?: string;
  private acquired = false;
  /** When the latest attempt was sent: a lease is counted from before the request that won it. */
  private requestedAt = 0;
  /** The lease the latest attempt asked Redis for (a fixed lease plus the cohort extra, see attempt). */
  private redisLeaseMs = 0;
  /** The cohort hand-off: a lock handed over by a local holder, and waiting locally. */
  private readonly local: LocalHandoff;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
  ) {
    // The engine id prefixes the owner id, so a script can tell this process' owners apart.
    this.ids = { owner: `${ctx.held.engineId}.${randomId()}`, holdId: randomId() };
    this.wait = new AcquisitionWait(ctx, {
      options: req.options,
      waitMs: req.waitMs,
      tryOnly: req.tryOnly,
      kindLabel: kindName(req.kind, req.options),
      directedWakeupSleepMs: req.kind.directedWakeupSleepMs,
      // A cohort kind's queue entry in Redis is the process (fair cohorts): wake-ups name it.
      owner: LocalHandoff.enabledFor(ctx, req) ? ctx.held.engineId : this.ids.owner,
    });
    this.ticket = ctx.queues.enter(req.names.lock, req.kind.isExclusive?.(req.options) ?? req.kind.exclusive);
    this.local = new LocalHandoff(ctx, req, this.ticket, this.wait);
  }

  /** Waits for the lock: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<LockHandle | null> {
    const channel = this.req.names.channel;
    try {
      let attemptNow = this.ticket.takeAttemptNow();
      while (!this.wait.aborted()) {
        if (this.local.pending) return this.takeHanded();
        if (!this.ticket.isHead) {
          const turn = await this.wait.waitForTurn(this.ticket, channel);
          if (turn === 'aborted') break;
          if (turn === 'timeout') return this.timedOut();
          attemptNow = turn === 'attempt-now';
        }
        if (!attemptNow || this.local.mustWaitLocally()) {
          const slept = (await this.wait.join(channel))
            ? await this.wait.sleep(this.local.enabled)
            : 'timeout';
          if (this.local.pending) return this.takeHanded();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
          if (this.local.mustWaitLocally()) continue;
        }
        attemptNow = false;
        const result = await this.attempt();
        if (result.status === 'granted') {
          // Aborted (or closed) while the winning command was in flight: the abort wins, the
          // grant is given back at once instead of returning a lock the caller no longer wants.
          if (this.wait.aborted()) {
            await this.giveBack();
            break;
          }
          return await this.grant(result);
        }
        if (this.local.pending) return this.takeHanded();
        this.busyReason = result.status === 'busy' ? result.reason : undefined;
        this.wait.noteBusy(this.req.key, result.status === 'busy' ? result.retryAfterMs : -1);
        if (this.wait.remaining() <= 0) return this.timedOut();
        if (!this.wait.joined()) {
          // Subscribe, then try once more at once: a release between our attempt and the
          // subscription would otherwise only be noticed by the backoff.
          if (!(await this.wait.join(channel))) return this.timedOut();
          attemptNow = true;
        }
      }
      return this.wait.abortedOut(this.req.key);
    } finally {
      this.cleanUp();
    }
  }

  /** The hold this acquisition asks for (attempt, abandon), before any time bound. */
  private holdRequest() {
    const { key, names, options, leaseMs } = this.req;
    return { key, names, owner: this.ids.owner, holdId: this.ids.holdId, leaseMs, reenter: false, options };
  }

  /** Releases a grant nobody will hold (the call was aborted meanwhile); a failure is left to the lease. */
  private async giveBack(): Promise<void> {
    await this.req.kind.release(this.holdRequest()).catch(() => undefined);
  }

  /** Takes the lock a local holder handed over. */
  private takeHanded(): LockHandle {
    const handle = this.local.take();
    this.acquired = true;
    const waitedMs = monotonicMs() - this.wait.started;
    this.wait.reportGrant(this.req.key, waitedMs, handle.fencingToken, { handedOver: true });
    return handle;
  }

  private async attempt(): Promise<AttemptResult> {
    this.wait.attempts++;
    this.requestedAt = monotonicMs();
    const lock = this.req.names.lock;
    const recordedWaits = this.ctx.recordedWaits;
    const recordedWaiting = recordedWaits.has(lock);
    // A fixed lease with local waiters: the Redis lease covers their hand-offs too (Cohort).
    const extra =
      this.local.enabled && !this.req.watchdog && this.ctx.queues.waitersOf(lock) > 1
        ? this.ctx.cohortLeaseExtraMs
        : 0;
    this.redisLeaseMs = this.req.leaseMs + extra;
    try {
      const result = await this.req.kind.attempt({
        ...this.holdRequest(),
        leaseMs: this.redisLeaseMs,
        timeoutMs: Math.max(1, this.wait.remaining()) + ATTEMPT_MARGIN_MS,
        recordedWaiting,
        ...(this.local.enabled && { reserveTokens: this.ctx.reserveTokens, process: this.ctx.held.engineId }),
      });
      if (result.status === 'granted') {
        if (recordedWaiting) recordedWaits.delete(lock);
      } else if (!recordedWaiting) {
        // Bounded: a forgotten record only costs a needless wake-up until its zset expires.
        if (recordedWaits.size >= MAX_RECORDED_WAITS) recordedWaits.clear();
        recordedWaits.add(lock);
      }
      return result;
    } catch (err) {
      recordedWaits.add(lock);
      this.wait.reportFailure(this.req.key, 'error');
      throw err;
    }
  }

  /** The grant a granted attempt stands for; a fresh cohort grant opens a cohort. */
  private async grant(result: Extract<AttemptResult, { status: 'granted' }>): Promise<LockHandle> {
    this.acquired = true;
    const { key, names, kind, options, leaseMs, watchdog } = this.req;
    const { requestedAt, ids, ctx } = this;
    const token = result.fencingToken;
    const cohort =
      this.local.enabled && !result.reentered
        ? new Cohort({
            holdId: ids.holdId,
            grantedToken: token,
            reservedTokens: ctx.reserveTokens,
            requestedAt,
            redisLeaseMs: this.redisLeaseMs,
          })
        : undefined;
    const grant = new LockGrant(ctx.held, {
      kind,
      key,
      names,
      owner: ids.owner,
      fencingToken: token,
      options,
      leaseMs,
      watchdog,
      requestedAt,
      replicaAcks: result.replicaAcks,
      cohort,
    });
    const handle = new GrantHandle(grant, ids.holdId);
    ctx.held.add(grant);
    if (ctx.isClosed()) {
      await handle.release();
      throw new LockServiceClosedError('closed', key);
    }
    const acks = result.replicaAcks !== undefined ? { replicaAcks: result.replicaAcks } : undefined;
    this.wait.reportGrant(key, requestedAt - this.wait.started, token, acks);
    return handle;
  }

  private timedOut(): LockHandle | null {
    if (this.local.pending) return this.takeHanded();
    return this.wait.timedOut(
      this.req.key,
      (waited) => this.busyReason && `${this.busyReason}; gave up after ${Math.round(waited)} ms`,
    );
  }

  private cleanUp(): void {
    this.local.settle();
    this.ticket.leave(this.acquired);
    this.wait.leave();
    // Kinds that queue waiters in Redis drop this one's entry now instead of at its deadline.
    const { kind, names } = this.req;
    if (this.acquired || !kind.abandon) return;
    if (!this.local.enabled) {
      if (this.wait.attempts > 0) void kind.abandon(this.holdRequest());
      return;
    }
    // Cohorts (the fair lock's entry is the process): the last local waiter takes the entry out,
    // whichever of them queued it; otherwise it stays for the next local waiter, who refreshes it.
    if (this.ctx.queues.waitersOf(names.lock) > 0 || !this.ctx.recordedWaits.delete(names.lock)) return;
    void kind.abandon({ ...this.holdRequest(), process: this.ctx.held.engineId });
  }
}
