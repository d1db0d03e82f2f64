import { LockServiceClosedError } from '../errors';
import { GrantHandle, type LockHandle } from '../grant/grant-handle';
import { LockGrant } from '../grant/lock-grant';
import type { LockKeyNames } from '../kinds/key-space';
import type { AttemptRequest, AttemptResult, LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { ATTEMPT_MARGIN_MS } from '../runtime/with-deadline';
import type { AcquisitionContext } from '../waiting/acquisition-context';
import type { Ticket } from '../waiting/local-wait-queues';
import { Waiter } from '../waiting/waiter';

/** How many locks' "recorded as waiting" marks an engine keeps (see AcquisitionContext.recordedWaits). */
const MAX_RECORDED_WAITS = 4096;

/** One call's parameters, validated and with defaults applied. */
export interface AcquisitionRequest {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly kind: LockKind;
  /** The kind's name in events (mutex, token, read, write, fair, semaphore). */
  readonly kindLabel: string;
  readonly options: LockOptions;
  readonly waitMs: number;
  readonly leaseMs: number;
  /** True when the watchdog renews the lease (no fixed `leaseMs`). */
  readonly watchdog: boolean;
  /** tryAcquire(): resolve null instead of throwing when the wait runs out. */
  readonly tryOnly: boolean;
}

/** The attempt request of one acquisition: one object, its per-attempt fields set before each attempt. */
type MutableAttempt = { -readonly [K in keyof AttemptRequest]: AttemptRequest[K] };

/**
 * One acquisition of one key: only the head of the process' local queue attempts (shared kinds let
 * every waiter try); a waiter sleeps on pub/sub wake-ups with exponential backoff as the safety net,
 * a cohort kind's waiter takes a lock a local holder hands over (both in its Waiter), and every Redis
 * command is bounded by what is left of `waitMs`. A granted attempt becomes a LockGrant, which opens
 * a cohort when it is a fresh grant of a cohort kind.
 */
export class Acquisition {
  private readonly ticket: Ticket;
  private readonly wait: Waiter;
  /** The request sent to the kind: built once, its lease, deadline and waiting mark set per attempt. */
  private readonly request: MutableAttempt;
  /** Cohort kinds with cohorts on: local waiters take hand-offs and wait for the local holder. */
  private readonly cohorts: boolean;
  /** Why the lock was busy when it is more than "held" (e.g. a RedLock split vote), for the error. */
  private busyReason?: string;
  private acquired = false;
  /** When the latest attempt was sent: a lease is counted from before the request that won it. */
  private requestedAt = 0;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
  ) {
    const started = ctx.runtime.now();
    this.cohorts = req.kind.cohorts === true && ctx.reserveTokens > 1;
    const { key, names, options, leaseMs, kind } = req;
    const owner = ownerId(ctx);
    this.request = { key, names, owner, holdId: ctx.runtime.randomId(), leaseMs, reenter: false, options };
    if (this.cohorts) {
      this.request.reserveTokens = ctx.reserveTokens;
      this.request.process = ctx.held.engineId;
    }
    this.ticket = ctx.queues.enter(names.lock, kind.isExclusive?.(options) ?? kind.exclusive);
    this.wait = new Waiter(
      ctx,
      {
        options,
        waitMs: req.waitMs,
        tryOnly: req.tryOnly,
        kindLabel: req.kindLabel,
        directedWakeupSleepMs: kind.directedWakeupSleepMs,
        // A cohort kind's queue entry in Redis is the process (fair cohorts): wake-ups name it.
        owner: this.cohorts ? ctx.held.engineId : owner,
      },
      started,
      this.cohorts ? { req, ticket: this.ticket } : undefined,
    );
    if (this.cohorts) this.ticket.waiter = this.wait;
  }

  /** Waits for the lock: a handle, null (tryOnly, still busy), or a rejection. */
  async run(): Promise<LockHandle | null> {
    const channel = this.req.names.channel;
    const wait = this.wait;
    try {
      let attemptNow = this.ticket.takeAttemptNow();
      while (!wait.aborted()) {
        if (wait.pending) return this.takeHanded();
        if (!this.ticket.isHead) {
          const turn = await wait.waitForTurn(this.ticket, channel);
          if (turn === 'aborted') break;
          if (turn === 'timeout') return this.timedOut();
          attemptNow = turn === 'attempt-now';
        }
        if (!attemptNow || wait.mustWaitLocally()) {
          const slept = (await wait.join(channel)) ? await wait.sleep() : 'timeout';
          if (wait.pending) return this.takeHanded();
          if (slept === 'timeout') return this.timedOut();
          if (slept === 'aborted') break;
          if (wait.mustWaitLocally()) continue;
        }
        attemptNow = false;
        const result = await this.attempt();
        if (result === UNANSWERED_AT_WAIT_END) return this.timedOut();
        if (result.status === 'granted') {
          // Aborted (or closed) while the winning command was in flight: the abort wins, the
          // grant is given back at once instead of returning a lock the caller no longer wants. Not
          // waited for: the caller has left, and a slow give-back (a server under CLIENT PAUSE, a
          // connection gone) would hold the call a command timeout past waitMs (simulator seed 3997);
          // no retry of this call can meet the grant, and a failed give-back is left to the lease.
          if (wait.aborted()) {
            void this.giveBack();
            break;
          }
          // A grant already lost when its answer came (read after its lease ran out here, or named by
          // a force release first: HeldLocks.lostOnArrival). As RedLock's validity check does: give it
          // back and go on as if busy.
          const lost = this.ctx.held.lostOnArrival(
            this.requestedAt,
            this.req.leaseMs,
            this.request.owner,
            this.req.names.lock,
          );
          if (lost !== undefined) {
            // With no wait left the give-back is not waited for (waitMs bounds the call); a retry
            // waits for it (one round trip), because until it is through Redis still holds the grant
            // under this call's owner, and an attempt would find it and answer as a re-entry, with no
            // new token (semaphore and read-write scripts: simulator seeds 3383 and 4233). A give-back
            // that failed leaves the hold to its lease: no retry then.
            this.busyReason = lost;
            wait.noteBusy(this.req.key, -1);
            if (wait.remaining() <= 0) {
              void this.giveBack();
              return this.timedOut();
            }
            if (!(await this.giveBack()) || wait.remaining() <= 0) return this.timedOut();
            attemptNow = true;
            continue;
          }
          const granted = this.grant(result);
          // Awaited only when the engine closed meanwhile (its release runs before cleanUp, as before).
          return granted instanceof GrantHandle ? granted : await granted;
        }
        if (wait.pending) return this.takeHanded();
        this.busyReason = result.status === 'busy' ? result.reason : undefined;
        wait.noteBusy(this.req.key, result.status === 'busy' ? result.retryAfterMs : -1);
        if (wait.remaining() <= 0) return this.timedOut();
        if (!wait.joined()) {
          // Subscribe, then try once more at once: a release between our attempt and the
          // subscription would otherwise only be noticed by the backoff.
          if (!(await wait.join(channel))) return this.timedOut();
          attemptNow = true;
        }
      }
      return wait.abortedOut(this.req.key);
    } finally {
      this.cleanUp();
    }
  }

  /** Releases a grant nobody will hold (the call was aborted meanwhile, or read it after its lease). */
  private async giveBack(): Promise<boolean> {
    // A failure is left to the lease, which ends a grant we could not give back: false.
    return this.req.kind.release(this.request).then(
      () => true,
      () => false,
    );
  }

  /** Takes the lock a local holder handed over. */
  private takeHanded(): LockHandle {
    const handle = this.wait.take();
    // Built in the releasing call's context: the lock is this caller's from now on.
    handle.grant.heldBy(this.ctx.runtime.keepContext());
    this.acquired = true;
    const waitedMs = this.ctx.runtime.now() - this.wait.started;
    this.wait.reportGrant(this.req.key, waitedMs, handle.fencingToken, { handedOver: true });
    return handle;
  }

  private async attempt(): Promise<AttemptResult | typeof UNANSWERED_AT_WAIT_END> {
    const { ctx, request } = this;
    if (++this.wait.attempts > 1) {
      // A retry asks for a hold of its own: the reply of an earlier attempt may still land after its
      // deadline, and undoing that late grant must not take the grant this attempt wins. (A reentrant
      // kind then re-enters the owner's late grant with the new hold; the late one is given back.)
      request.holdId = ctx.runtime.randomId();
      if (!this.req.kind.reentrant) request.owner = ownerId(ctx);
    }
    this.requestedAt = ctx.runtime.now();
    const lock = this.req.names.lock;
    const recordedWaits = ctx.recordedWaits;
    const recordedWaiting = recordedWaits.has(lock);
    // A fixed lease with local waiters: the Redis lease covers their hand-offs too (Cohort).
    const extra =
      this.cohorts && !this.req.watchdog && ctx.queues.waitersOf(lock) > 1 ? ctx.cohortLeaseExtraMs : 0;
    request.leaseMs = this.req.leaseMs + extra;
    request.timeoutMs = Math.max(1, this.wait.remaining()) + ATTEMPT_MARGIN_MS;
    request.recordedWaiting = recordedWaiting;
    try {
      const result = await this.req.kind.attempt(request);
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
      // A lock seen busy whose wait ended with this attempt unanswered: busy (Waiter.unansweredAtEnd).
      const unanswered = this.wait.unansweredAtEnd(err, request.timeoutMs);
      if (unanswered !== undefined) {
        this.busyReason = unanswered;
        return UNANSWERED_AT_WAIT_END;
      }
      this.wait.reportFailure(this.req.key, 'error');
      throw err;
    }
  }

  /**
   * The grant a granted attempt stands for; a fresh cohort grant opens a cohort. Synchronous (no
   * promise of its own on the uncontended path) unless the engine closed meanwhile.
   */
  private grant(result: Extract<AttemptResult, { status: 'granted' }>): GrantHandle | Promise<never> {
    this.acquired = true;
    const { key, names, kind, options, leaseMs, watchdog } = this.req;
    const { requestedAt, request, ctx } = this;
    const token = result.fencingToken;
    const grant = new LockGrant(ctx.held, {
      kind,
      key,
      names,
      owner: request.owner,
      fencingToken: token,
      options,
      leaseMs,
      watchdog,
      requestedAt,
      replicaAcks: result.replicaAcks,
      // A fresh grant of a cohort kind reserved tokens for local hand-offs: it opens a cohort.
      cohort:
        this.cohorts && !result.reentered
          ? { holdId: request.holdId, reservedTokens: ctx.reserveTokens, redisLeaseMs: request.leaseMs }
          : undefined,
    });
    grant.heldBy(ctx.runtime.keepContext());
    const handle = new GrantHandle(grant, request.holdId);
    ctx.held.add(grant);
    if (ctx.isClosed()) {
      return handle.release().then(() => {
        throw new LockServiceClosedError('closed', key);
      });
    }
    const acks = result.replicaAcks !== undefined ? { replicaAcks: result.replicaAcks } : undefined;
    this.wait.reportGrant(key, requestedAt - this.wait.started, token, acks);
    return handle;
  }

  private timedOut(): LockHandle | null {
    if (this.wait.pending) return this.takeHanded();
    // Waited behind a holder of this process without asking Redis: its lease is known here.
    if (this.wait.retryAfterMs < 0)
      this.wait.retryAfterMs = this.ctx.held.remainingLeaseOf(this.req.names.lock);
    return this.wait.timedOut(
      this.req.key,
      (waited) => this.busyReason && `${this.busyReason}; gave up after ${Math.round(waited)} ms`,
    );
  }

  private cleanUp(): void {
    this.wait.settle();
    this.ticket.leave(this.acquired);
    this.wait.leave();
    // Kinds that queue waiters in Redis drop this one's entry now instead of at its deadline.
    const { kind, names } = this.req;
    if (this.acquired || !kind.abandon) return;
    if (!this.cohorts) {
      if (this.wait.attempts > 0) void kind.abandon(this.request);
      return;
    }
    // Cohorts (the fair lock's entry is the process): the last local waiter takes the entry out,
    // whichever of them queued it; otherwise it stays for the next local waiter, who refreshes it.
    if (this.ctx.queues.waitersOf(names.lock) > 0 || !this.ctx.recordedWaits.delete(names.lock)) return;
    void kind.abandon(this.request);
  }
}

/** attempt()'s answer when the wait ended with its last attempt unanswered (see there). */
const UNANSWERED_AT_WAIT_END = Symbol('unanswered at the end of the wait');

/** A new owner id. The engine id prefixes it, so a script can tell this process' owners apart. */
function ownerId(ctx: AcquisitionContext): string {
  return `${ctx.held.engineId}.${ctx.runtime.randomId()}`;
}
