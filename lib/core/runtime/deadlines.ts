/**
 * Something that must happen at a monotonic time unless it is removed first: a command's timeout,
 * a fixed lease's local end, `maxHoldMs`, a watchdog lease that no renewal came back for.
 */
export interface Deadline {
  /** Monotonic ms (the runtime's now()) at which `expire` runs. */
  at: number;
  /** @internal Position in the heap; -1 when not scheduled. */
  slot: number;
  /** True when the process must stay alive until it is due or removed (a bounded wait; see withDeadline). */
  readonly keepsAlive?: boolean;
  expire(): void;
}

/** The one timer a Deadlines heap arms: cancelled, or made to hold the process open. */
export interface HeapTimer {
  cancel(): void;
  keepAlive(on: boolean): void;
}

/**
 * The one earliest-deadline timer of a runtime (in production, of the process): every deadline of
 * every engine on ONE unref'd timer, armed for the earliest, instead of a timer per command and per lease. Deadlines live in a
 * binary min-heap indexed by `slot`, so adding, moving and removing one cost O(log n) however many
 * locks are held or commands in flight. Most deadlines are removed long before they are due (a
 * command answered in well under a millisecond, a lease released early): that costs no timer call.
 * The timer is unref'd: a command in flight keeps the process alive through its socket, a held lock
 * alone does not. Only while a deadline that `keepsAlive` is scheduled (a bounded wait such as a drain)
 * does it hold the process open, as the timer of its own that such a wait used to start did.
 */
export class Deadlines {
  private readonly heap: Deadline[] = [];
  private timer?: HeapTimer;
  /** When the armed timer fires; Infinity when none is armed. */
  private timerAt = Infinity;
  /** Scheduled deadlines that keep the process alive: the timer is ref'd while there are any. */
  private keepingAlive = 0;

  constructor(
    /** The runtime's monotonic clock. */
    private readonly now: () => number,
    /** Arms the heap's timer: `fire` runs after `ms`; unref'd until keepAlive(true). */
    private readonly armTimer: (fire: () => void, ms: number) => HeapTimer,
  ) {}

  /** Schedules `d` at `d.at` (or moves it there when already scheduled). */
  schedule(d: Deadline): void {
    if (d.slot >= 0) {
      this.siftUp(d.slot);
      this.siftDown(d.slot);
    } else {
      d.slot = this.heap.length;
      this.heap.push(d);
      this.siftUp(d.slot);
      if (d.keepsAlive && this.keepingAlive++ === 0) this.timer?.keepAlive(true);
    }
    if (d.at < this.timerAt) this.arm(d.at);
  }

  /** Removes `d` if scheduled. */
  remove(d: Deadline): void {
    const i = d.slot;
    if (i < 0) return;
    d.slot = -1;
    if (d.keepsAlive && --this.keepingAlive === 0) this.timer?.keepAlive(false);
    const last = this.heap.pop()!;
    if (last !== d) {
      this.heap[i] = last;
      last.slot = i;
      this.siftUp(i);
      this.siftDown(last.slot);
    }
    // The timer stays armed for a deadline that is gone: it fires once, finds nothing due and re-arms
    // (or stops), which is cheaper than a clearTimeout per removal on the hot path. It is unref'd.
  }

  /** Deadlines scheduled (for leak tests). */
  get size(): number {
    return this.heap.length;
  }

  private arm(at: number): void {
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.armTimer(() => this.fire(), Math.max(0, at - this.now()));
    if (this.keepingAlive > 0) this.timer.keepAlive(true);
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    for (let top = this.heap[0]; top && top.at <= now; top = this.heap[0]) {
      this.remove(top);
      top.expire();
    }
    const next = this.heap[0];
    if (next && next.at < this.timerAt) this.arm(next.at);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    const d = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (p.at <= d.at) break;
      heap[i] = p;
      p.slot = i;
      i = parent;
    }
    heap[i] = d;
    d.slot = i;
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const d = heap[i]!;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && heap[right]!.at < heap[left]!.at ? right : left;
      const c = heap[child]!;
      if (c.at >= d.at) break;
      heap[i] = c;
      c.slot = i;
      i = child;
    }
    heap[i] = d;
    d.slot = i;
  }
}
