import type { Deadline } from './deadlines';
import type { Runtime } from './runtime';

/**
 * A one-shot wait for something that may not come: `sleep(ms)` resolves with what `end(value)` gives,
 * or when `ms` have passed (`expire`, which the subclass answers). Its deadline is this object itself,
 * on the runtime's one heap, not a timer of its own: a hand-off or a message usually ends the wait long
 * before. A waiter's turn in a local queue (Ticket) and its next wake-up on a channel (Wakeups) are such
 * waits; they extend this class, so a waiter stays one object. A caller awaits it, so its deadline keeps
 * the process alive.
 */
export abstract class DeadlineWait<T> implements Deadline {
  /** @internal The deadline of the wait in progress (Deadline). */
  at = Infinity;
  /** @internal */
  slot = -1;
  readonly keepsAlive = true;
  private settle?: (value: T) => void;

  protected constructor(protected readonly runtime: Runtime) {}

  /** @internal The wait's time ran out (Deadline): the subclass ends it with its own answer. */
  abstract expire(): void;

  /** Resolves at end(value), or at expire() `ms` from now. One wait at a time. */
  protected sleep(ms: number): Promise<T> {
    return new Promise<T>((resolve) => {
      this.settle = resolve;
      this.at = this.runtime.now() + ms;
      this.runtime.deadlines.schedule(this);
    });
  }

  /** Ends the wait in progress with `value`; false when none was in progress. */
  protected end(value: T): boolean {
    const settle = this.settle;
    if (!settle) return false;
    this.settle = undefined;
    this.runtime.deadlines.remove(this);
    settle(value);
    return true;
  }
}
