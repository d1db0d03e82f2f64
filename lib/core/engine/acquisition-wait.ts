import { LockNotAcquiredError, LockServiceClosedError } from '../errors';
import type { LockOptions } from '../options/lock-options';
import { linkSignals } from '../waiting/abort';
import type { Ticket } from '../waiting/wait-queue';
import type { Wakeups } from '../waiting/wakeup-hub';
import { withDeadline } from '../waiting/with-deadline';
import type { AcquisitionContext } from './acquisition';
import { monotonicMs } from './ids';

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

/**
 * The waiting side of one acquire call, shared by single-key and multi-key locking: its deadline,
 * the wake-ups of the lock's channel, the exponential backoff (1 → 128 ms by default), the signal
 * that ends a sleep (the caller's, or close()), and how the wait is reported when it ends.
 */
export class AcquisitionWait {
  readonly started = monotonicMs();
  attempts = 0;
  /** The busy holder's remaining lease from the latest attempt (ms); -1 when unknown. */
  retryAfterMs = -1;
  private readonly deadline: number;
  // The linked signal (an AbortController and two listeners) is built only when the call has to
  // wait; a first attempt that wins never pays for it.
  private link?: { signal: AbortSignal; unlink: () => void };
  private wakeups?: Wakeups;
  private channel?: string;
  private backoffMs: number;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly call: WaitCall,
  ) {
    this.deadline = this.started + call.waitMs;
    this.backoffMs = ctx.backoff.initialMs;
  }

  /** True once subscribed to `channel` (any channel when omitted). */
  joined(channel?: string): boolean {
    return this.wakeups !== undefined && (channel === undefined || channel === this.channel);
  }

  remaining(): number {
    return this.deadline - monotonicMs();
  }

  aborted(): boolean {
    return this.call.options.signal?.aborted === true || this.ctx.closing.aborted;
  }

  /** Wakes a sleep now (a local hand-off, or the local holder let go). */
  wake(): void {
    this.wakeups?.wake();
  }

  private waitSignal(): AbortSignal {
    return (this.link ??= linkSignals(this.call.options.signal, this.ctx.closing)).signal;
  }

  /**
   * Subscribes to `channel` (leaving the one joined before, if another), within what is left of
   * the wait; false when the wait ran out.
   */
  async join(channel: string): Promise<boolean> {
    if (this.joined(channel)) return true;
    this.wakeups?.leave();
    this.wakeups = undefined;
    const joining = this.ctx.hub.join(channel);
    this.wakeups = await withDeadline(joining, Math.max(1, this.remaining()));
    if (!this.wakeups) {
      joining.then(
        (w) => w.leave(),
        () => undefined,
      );
      return false;
    }
    this.channel = channel;
    // Directed wake-ups (the fair lock) name the waiter by its owner id.
    if (this.call.directedWakeupSleepMs !== undefined) this.wakeups.owner = this.call.owner;
    return true;
  }

  /** A waiter behind the local head: waits to become head. */
  async waitForTurn(
    ticket: Ticket,
    channel: string,
  ): Promise<'attempt-now' | 'sleep' | 'timeout' | 'aborted'> {
    if (!(await this.join(channel))) return 'timeout';
    if (!(await ticket.turn(Math.max(0, this.remaining()), this.waitSignal()))) {
      return this.aborted() ? 'aborted' : 'timeout';
    }
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
  async sleep(cohortKind: boolean): Promise<'woken' | 'timeout' | 'aborted'> {
    if (this.remaining() <= 0) return 'timeout';
    if (!this.wakeups) return 'timeout';
    const holderLeft = this.retryAfterMs >= 0 ? this.retryAfterMs + 1 : Infinity;
    const directed = this.call.directedWakeupSleepMs;
    const step = directed ?? (cohortKind ? this.ctx.backoff.maxMs : this.backoffMs);
    const ms = Math.max(1, Math.min(step, holderLeft, this.remaining()));
    await this.wakeups.wait(ms, this.waitSignal());
    this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.backoff.maxMs);
    return this.aborted() ? 'aborted' : 'woken';
  }

  /** An attempt found `key` busy: remembers the holder's remaining lease and reports contention. */
  noteBusy(key: string, retryAfterMs: number): void {
    this.retryAfterMs = retryAfterMs;
    this.reportContention(key, retryAfterMs);
  }

  /** Reports contention on `key` (`contended`). */
  reportContention(key: string, retryAfterMs: number): void {
    this.ctx.events.safeEmit('contended', { key, kind: this.call.kindLabel, retryAfterMs });
  }

  /** Removes the linked signal's listeners and leaves the channel. */
  leave(): void {
    this.link?.unlink();
    this.wakeups?.leave();
  }

  /** Reports a wait that ended without the lock (`notAcquired`), naming `key`. */
  reportFailure(key: string, reason: Failure): void {
    this.ctx.events.safeEmit('notAcquired', {
      key,
      kind: this.call.kindLabel,
      waitedMs: monotonicMs() - this.started,
      attempts: this.attempts,
      reason,
      tryOnly: this.call.tryOnly,
      waitMs: this.call.waitMs,
    });
  }

  /** Reports a grant of `key` (`acquired`) whose request was sent `waitedMs` after the wait began. */
  reportGrant(
    key: string,
    waitedMs: number,
    fencingToken: number,
    extra?: { replicaAcks?: number; handedOver?: true },
  ): void {
    this.ctx.events.safeEmit('acquired', {
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
    const waited = monotonicMs() - this.started;
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
      throw new LockServiceClosedError('shutting down', key, monotonicMs() - this.started);
    }
    this.reportFailure(key, 'aborted');
    throw signal!.reason;
  }
}
