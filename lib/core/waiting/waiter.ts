import { LockNotAcquiredError, LockServiceClosedError } from '../errors';
import type { GrantHandle } from '../grant/grant-handle';
import type { LockGrant } from '../grant/lock-grant';
import type { LockKeyNames } from '../kinds/key-space';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { endedByCallersBudget } from '../redis/redis-gateway';
import { withDeadline } from '../runtime/with-deadline';
import { watchAborts } from './abort';
import type { AcquisitionContext } from './acquisition-context';
import type { QueuedWaiter, Ticket } from './local-wait-queues';
import type { Wakeups } from './wakeup-hub';

/** Why a wait ended without the lock. */
export type Failure = 'timeout' | 'aborted' | 'closed' | 'error';

/** What one call's wait needs to know of the call (single-key and multi-key alike). */
export interface WaitCall {
  readonly options: LockOptions;
  readonly waitMs: number;
  /** tryAcquire(): resolve null instead of throwing when the wait runs out. */
  readonly tryOnly: boolean;
  /** The kind's name in events (mutex, token, read, write, fair, semaphore). */
  readonly kindLabel: string;
  /** The fair lock's directed wake-ups: sleep this long between refreshes (and name the waiter). */
  readonly directedWakeupSleepMs?: number;
  /** This waiter's owner id: directed wake-ups name it. */
  readonly owner: string;
}

/** The single-key request a waiter takes hand-offs for (an Acquisition's request). */
export interface HandoffRequest {
  readonly key: string;
  readonly names: LockKeyNames;
  readonly kind: LockKind;
  readonly options: LockOptions;
  readonly leaseMs: number;
  /** True when the watchdog renews the lease (no fixed `leaseMs`). */
  readonly watchdog: boolean;
}

/**
 * One caller waiting for a lock: its deadline, its place in the local queue (the ticket), the
 * wake-ups of the lock's channel, the exponential backoff (1 → 128 ms by default), the signal that
 * ends a sleep (the caller's, or close()), its hand-off inbox (a lock a holder of this process passes
 * on without Redis: cohorts), and how the wait is reported when it ends. Single-key and multi-key
 * calls wait the same way; only single-key waiters queue locally and take hand-offs.
 */
export class Waiter implements QueuedWaiter {
  attempts = 0;
  /** The busy holder's remaining lease from the latest attempt (ms); -1 when unknown. */
  retryAfterMs = -1;
  /** The lock was found busy (in Redis, or behind a local holder) at least once in this wait. */
  private sawBusy = false;
  private readonly deadline: number;
  // The caller's signal and close() are watched only once the call has to wait (one fan-out entry
  // each, no AbortController: see watchAborts); a first attempt that wins never pays for it.
  private unwatch?: () => void;
  /** The ticket whose turn this waiter awaits now: an abort ends that wait (interrupt). */
  private awaitedTurn?: Ticket;
  private wakeups?: Wakeups;
  /** wake() came while no channel was joined: delivered by join(). */
  private wokenWhileJoining = false;
  private channel?: string;
  private backoffMs: number;
  /** A lock handed over by a local holder of the same process (cohorts), not yet taken. */
  private handed?: GrantHandle;
  /** Set once the call has settled: later hand-offs are refused. */
  private settled = false;
  private reportedLocal = false;
  private readonly req?: HandoffRequest;
  private readonly ticket?: Ticket;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly call: WaitCall,
    /** Monotonic time the call began. */
    readonly started: number,
    /** The single-key request this waiter waits for and its place in the local queue, when it takes hand-offs (cohort kinds). */
    handoff?: { readonly req: HandoffRequest; readonly ticket: Ticket },
  ) {
    this.req = handoff?.req;
    this.ticket = handoff?.ticket;
    this.deadline = started + call.waitMs;
    this.backoffMs = ctx.backoff.initialMs;
  }

  /** True once subscribed to `channel` (any channel when omitted). */
  joined(channel?: string): boolean {
    return this.wakeups !== undefined && (channel === undefined || channel === this.channel);
  }

  remaining(): number {
    return this.deadline - this.ctx.runtime.now();
  }

  aborted(): boolean {
    return this.call.options.signal?.aborted === true || this.ctx.closing.aborted;
  }

  /**
   * Wakes a sleep now (a local hand-off, or the local holder let go). A wake while the waiter is
   * between channels (joining) is kept and delivered once it has joined, so the next sleep returns.
   */
  wake(): void {
    if (this.wakeups) this.wakeups.wake();
    else this.wokenWhileJoining = true;
  }

  /** From now on an abort (the caller's signal, or close()) ends whichever wait this waiter is in. */
  private watchAborts(): void {
    this.unwatch ??= watchAborts(this.call.options.signal, this.ctx.closing, () => this.interrupt());
  }

  /** Aborted: ends the sleep (as a wake-up: sleep() then reports the abort) or the wait for the turn. */
  private interrupt(): void {
    this.wake();
    this.awaitedTurn?.interrupt();
  }

  /**
   * Subscribes to `channel` (leaving the one joined before, if another), within what is left of
   * the wait; false when the wait ran out.
   */
  async join(channel: string): Promise<boolean> {
    if (this.joined(channel)) return true;
    this.wakeups?.leave();
    this.wakeups = undefined;
    // A channel other waiters of this process already joined: no wait for a confirmation (and no
    // deadline, race and promises for it, per waiter).
    this.wakeups = this.ctx.hub.joinSettled(channel);
    if (!this.wakeups) {
      const joining = this.ctx.hub.join(channel);
      this.wakeups = await withDeadline(this.ctx.runtime, joining, Math.max(1, this.remaining()));
      if (!this.wakeups) {
        joining.then(
          (w) => w.leave(),
          () => undefined,
        );
        return false;
      }
    }
    this.channel = channel;
    if (this.wokenWhileJoining) {
      this.wokenWhileJoining = false;
      this.wakeups.wake();
    }
    // Directed wake-ups name the waiter: the fair lock's by its owner id, a cohort kind's by its
    // process (a cohort ending at its bound wakes only the process it reserved the lock for).
    if (this.call.directedWakeupSleepMs !== undefined || this.req) this.wakeups.owner = this.call.owner;
    return true;
  }

  /** A waiter behind the local head: waits to become head. */
  async waitForTurn(
    ticket: Ticket,
    channel: string,
  ): Promise<'attempt-now' | 'sleep' | 'timeout' | 'aborted'> {
    if (!(await this.join(channel))) return 'timeout';
    this.watchAborts();
    if (this.aborted()) return 'aborted';
    this.awaitedTurn = ticket;
    const reached = await ticket.turn(Math.max(0, this.remaining()));
    this.awaitedTurn = undefined;
    if (!reached) return this.aborted() ? 'aborted' : 'timeout';
    // Its turn came after a holder of this process: the lock was busy.
    this.sawBusy = true;
    this.backoffMs = this.ctx.backoff.initialMs;
    if (ticket.takeAttemptNow()) return 'attempt-now';
    // Promoted because the predecessor just won: wake-ups seen before that are stale.
    this.wakeups!.discardPending();
    return 'sleep';
  }

  /**
   * Sleeps on the joined channel until a wake-up, the backoff, the holder's lease end or the
   * deadline. A cohort kind's busy attempt recorded this waiter in Redis (the release will publish),
   * and a local holder tells its waiters itself: both sleep on the message with the longest backoff
   * as the safety net, not 1-2-4 ms polling.
   */
  async sleep(): Promise<'woken' | 'timeout' | 'aborted'> {
    if (this.remaining() <= 0) return 'timeout';
    if (!this.wakeups) return 'timeout';
    const holderLeft = this.retryAfterMs >= 0 ? this.retryAfterMs + 1 : Infinity;
    // A channel whose subscription was never confirmed hears no release: poll on the backoff.
    const directed = this.wakeups.subscribed ? this.call.directedWakeupSleepMs : undefined;
    const step = directed ?? (this.req && this.wakeups.subscribed ? this.ctx.backoff.maxMs : this.backoffMs);
    const ms = Math.max(1, Math.min(step, holderLeft, this.remaining()));
    this.watchAborts();
    if (this.aborted()) return 'aborted';
    await this.wakeups.wait(ms);
    this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.backoff.maxMs);
    return this.aborted() ? 'aborted' : 'woken';
  }

  // ---- the hand-off inbox (cohort kinds) ----

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
    const req = this.req;
    if (!req || !this.ctx.held.holdsLocally(req.names.lock)) return false;
    // Contention all the same, only settled in this process: reported once per wait.
    if (!this.reportedLocal) {
      this.reportedLocal = true;
      this.reportContention(req.key, -1);
    }
    return true;
  }

  /** Whether this waiter takes `grant`'s lock now (same kind and lease mode, still waiting, the head). */
  accepts(grant: LockGrant): boolean {
    const req = this.req;
    if (!req || this.settled || this.handed || this.aborted() || !this.ticket!.isHead) return false;
    const { kind, watchdog, options: o } = req;
    return (
      grant.kind === kind &&
      // The same lease mode: a watchdog lock is renewed for as long as it is held, a fixed one is not.
      grant.watchdog === watchdog &&
      o.minHoldMs === undefined &&
      o.maxHoldMs === undefined
    );
  }

  /** The options and lease a handed-over successor grant gets (call only when it accepted). */
  get handoffRequest(): { readonly options: LockOptions; readonly leaseMs: number } {
    return this.req!;
  }

  /** Gives this waiter a handed-over lock; it takes it (or releases it) at its next step. */
  receive(handle: GrantHandle): void {
    this.handed = handle;
    this.wake();
  }

  /** The call has settled: refuses later hand-offs, releases one that came too late. */
  settle(): void {
    this.settled = true;
    // Handed over while this call gave up (abort, error): release it in Redis.
    if (this.handed) void this.handed.release();
  }

  // ---- how the wait is reported ----

  /** An attempt found `key` busy: remembers the holder's remaining lease and reports contention. */
  noteBusy(key: string, retryAfterMs: number): void {
    this.sawBusy = true;
    this.retryAfterMs = retryAfterMs;
    this.reportContention(key, retryAfterMs);
  }

  /**
   * Why the call is busy when `err` failed the wait's last attempt (sent with `timeoutMs`) after the
   * wait ran out, and only that attempt's own budget (what was left of the wait + ATTEMPT_MARGIN_MS),
   * not commandTimeoutMs, ended it, with the lock seen busy before: the call then reports busy, as
   * waitMs promised, rather than a Redis failure (an event-loop stall or a loaded Redis at the end of
   * a wait; a late grant is given back on arrival). Undefined when `err` stands.
   */
  unansweredAtEnd(err: unknown, timeoutMs: number): string | undefined {
    if (!this.sawBusy || !endedByCallersBudget(err) || this.remaining() > 0) return undefined;
    return `busy when last asked; the attempt sent as the wait ended got no answer within ${Math.round(timeoutMs)} ms`;
  }

  /** Reports contention on `key` (`contended`). */
  reportContention(key: string, retryAfterMs: number): void {
    const events = this.ctx.events;
    if (events.wants('contended'))
      events.safeEmit('contended', { key, kind: this.call.kindLabel, retryAfterMs });
  }

  /** Removes the linked signal's listeners and leaves the channel. */
  leave(): void {
    this.unwatch?.();
    this.wakeups?.leave();
  }

  /** Reports a wait that ended without the lock (`notAcquired`), naming `key`. */
  reportFailure(key: string, reason: Failure): void {
    const { ctx, call } = this;
    if (!ctx.events.wants('notAcquired')) return;
    ctx.events.safeEmit('notAcquired', {
      key,
      kind: call.kindLabel,
      waitedMs: this.ctx.runtime.now() - this.started,
      attempts: this.attempts,
      reason,
      tryOnly: call.tryOnly,
      waitMs: call.waitMs,
    });
  }

  /** Reports a grant of `key` (`acquired`) whose request was sent `waitedMs` after the call began. */
  reportGrant(
    key: string,
    waitedMs: number,
    fencingToken: number,
    extra?: { replicaAcks?: number; handedOver?: true },
  ): void {
    const events = this.ctx.events;
    if (!events.wants('acquired')) return;
    events.safeEmit('acquired', {
      key,
      kind: this.call.kindLabel,
      waitedMs,
      attempts: this.attempts,
      reentered: false,
      fencingToken,
      ...extra,
    });
  }

  /**
   * The wait ran out: reported, then null for tryOnly, else a LockNotAcquiredError whose reason
   * `reasonFor` words from the time waited.
   */
  timedOut(key: string, reasonFor: (waited: number) => string | undefined): null {
    this.reportFailure(key, 'timeout');
    if (this.call.tryOnly) return null;
    const waited = this.ctx.runtime.now() - this.started;
    const expected = this.ctx.retryAfter(key, this.retryAfterMs);
    throw new LockNotAcquiredError(key, waited, this.retryAfterMs, {
      reason: reasonFor(waited),
      expectedFreeInMs: expected,
    });
  }

  /** Aborted: by the caller's signal, or by close(). */
  abortedOut(key: string): never {
    const signal = this.call.options.signal;
    if (this.ctx.closing.aborted && !signal?.aborted) {
      this.reportFailure(key, 'closed');
      throw new LockServiceClosedError('shutting down', key, this.ctx.runtime.now() - this.started);
    }
    this.reportFailure(key, 'aborted');
    throw signal!.reason;
  }
}
