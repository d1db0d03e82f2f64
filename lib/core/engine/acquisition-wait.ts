import { linkSignals } from '../waiting/abort';
import type { Ticket } from '../waiting/wait-queue';
import type { Wakeups } from '../waiting/wakeup-hub';
import { withDeadline } from '../waiting/with-deadline';
import type { AcquisitionContext, AcquisitionRequest } from './acquisition-context';
import { monotonicMs } from './ids';

/**
 * The sleeping side of one acquisition: its deadline, the wake-ups of the lock's channel, the
 * exponential backoff, and the signal that ends a sleep (the caller's, or close()).
 */
export class AcquisitionWait {
  private readonly deadline: number;
  // The linked signal (an AbortController and two listeners) is built only when the call has to
  // wait; a first attempt that wins never pays for it.
  private link?: { signal: AbortSignal; unlink: () => void };
  private wakeups?: Wakeups;
  private backoffMs: number;

  constructor(
    private readonly ctx: AcquisitionContext,
    private readonly req: AcquisitionRequest,
    started: number,
    /** This waiter's owner id: directed wake-ups (the fair lock) name it. */
    private readonly owner: string,
  ) {
    this.deadline = started + req.waitMs;
    this.backoffMs = ctx.backoff.initialMs;
  }

  /** True once subscribed to the lock's channel. */
  get joined(): boolean {
    return this.wakeups !== undefined;
  }

  remaining(): number {
    return this.deadline - monotonicMs();
  }

  aborted(): boolean {
    return this.req.options.signal?.aborted === true || this.ctx.closing.aborted;
  }

  /** Wakes a sleep now (a local hand-off, or the local holder let go). */
  wake(): void {
    this.wakeups?.wake();
  }

  private waitSignal(): AbortSignal {
    return (this.link ??= linkSignals(this.req.options.signal, this.ctx.closing)).signal;
  }

  /** Subscribes to the lock's channel, within what is left of the wait; false when the wait ran out. */
  async join(): Promise<boolean> {
    const joining = this.ctx.hub.join(this.req.names.channel);
    this.wakeups = await withDeadline(joining, Math.max(1, this.remaining()));
    if (!this.wakeups)
      joining.then(
        (w) => w.leave(),
        () => undefined,
      );
    // Directed wake-ups (the fair lock) name the waiter by its owner id.
    else if (this.req.kind.directedWakeupSleepMs !== undefined) this.wakeups.owner = this.owner;
    return this.wakeups !== undefined;
  }

  /** A waiter behind the local head: waits to become head. */
  async waitForTurn(ticket: Ticket): Promise<'attempt-now' | 'sleep' | 'timeout' | 'aborted'> {
    if (!this.wakeups && !(await this.join())) return 'timeout';
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
   * Sleeps until a wake-up, the backoff, the holder's lease end or the deadline. A cohort kind's
   * busy attempt recorded this waiter in Redis (the release will publish), and a local holder tells
   * its waiters itself: both sleep on the message with the longest backoff as the safety net, not
   * 1-2-4 ms polling.
   */
  async sleep(retryAfterMs: number, cohortKind: boolean): Promise<'woken' | 'timeout' | 'aborted'> {
    if (this.remaining() <= 0) return 'timeout';
    if (!this.wakeups && !(await this.join())) return 'timeout';
    const holderLeft = retryAfterMs >= 0 ? retryAfterMs + 1 : Infinity;
    const directed = this.req.kind.directedWakeupSleepMs;
    const step = directed ?? (cohortKind ? this.ctx.backoff.maxMs : this.backoffMs);
    const ms = Math.max(1, Math.min(step, holderLeft, this.remaining()));
    await this.wakeups!.wait(ms, this.waitSignal());
    this.backoffMs = Math.min(this.backoffMs * 2, this.ctx.backoff.maxMs);
    return this.aborted() ? 'aborted' : 'woken';
  }

  /** Removes the listeners of the linked signal. */
  unlink(): void {
    this.link?.unlink();
  }

  /** Leaves the lock's channel. */
  leave(): void {
    this.wakeups?.leave();
  }
}
