/**
 * Deadlines of the commands in flight on one gateway, on ONE timer instead of a timer (and a
 * Promise.race) per command. The timer is armed for the earliest deadline; a command that settles
 * in time only leaves the set (no timer call). When the timer fires, the overdue commands time out
 * and it is armed again for the earliest one left, if any. Most commands settle in well under a
 * millisecond while their deadlines lie seconds away, so a busy loop of commands costs about one
 * timer operation per deadline period, not two per command. The timer is unref'd: a command in
 * flight keeps the process alive through its socket, not through its deadline.
 */
export class CommandDeadlines {
  private readonly pending = new Set<PendingDeadline>();
  private timer?: NodeJS.Timeout;
  /** When the armed timer fires (performance.now() ms); Infinity when none is armed. */
  private timerAt = Infinity;

  /**
   * Settles with `work`, or rejects with `onTimeout()` after `ms` when `work` has not settled by
   * then (a late failure of `work` is swallowed: the caller has moved on).
   */
  race<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingDeadline = { at: performance.now() + ms, expire: () => reject(onTimeout()) };
      this.pending.add(entry);
      if (entry.at < this.timerAt) this.arm(entry.at);
      work.then(
        (value) => {
          if (this.pending.delete(entry)) resolve(value);
        },
        (err: unknown) => {
          if (this.pending.delete(entry)) reject(err);
        },
      );
    });
  }

  /** Commands whose deadline is still ahead (for leak tests). */
  get size(): number {
    return this.pending.size;
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const entry of this.pending) {
      if (entry.at <= now) {
        this.pending.delete(entry);
        entry.expire();
      } else if (entry.at < next) {
        next = entry.at;
      }
    }
    if (next < Infinity) this.arm(next);
  }
}

interface PendingDeadline {
  readonly at: number;
  readonly expire: () => void;
}
