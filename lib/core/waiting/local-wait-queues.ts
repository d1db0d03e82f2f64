import type { LocalWaiters, Successor } from '../grant/held-locks';
import { DeadlineWait } from '../runtime/deadline-wait';
import type { Runtime } from '../runtime/runtime';
import { SmallMap } from '../runtime/small-collections';

/** A waiter that holds a place in a local queue and takes hand-offs (a Waiter). */
export interface QueuedWaiter extends Successor {
  /** Wakes its sleep now (the local holder let go). */
  wake(): void;
}

/**
 * Local FIFO of the waiters of one process on one lock. For exclusive kinds only the head waiter
 * talks to Redis, so a release wakes one attempt per process instead of a thundering herd; shared
 * kinds (readers, semaphore permits) let every waiter attempt. Each queue is a doubly linked list
 * of tickets: joining and leaving cost O(1) whatever the number of waiters (a flood of 100,000
 * waiters on one key must not cost quadratic time), and `maxWaitersPerKey` bounds its length.
 */
export class LocalWaitQueues implements LocalWaiters {
  private readonly queues = new SmallMap<string, KeyQueue>();

  constructor(
    /** The engine's timers: a waiter's turn is bounded by one. */
    readonly runtime: Runtime,
    /** Waiters one process may queue on one lock; callers beyond it are refused at once. */
    readonly maxWaitersPerKey = Infinity,
  ) {}

  /** True when `lockName` already has `maxWaitersPerKey` local waiters: a new caller is refused. */
  isFull(lockName: string): boolean {
    return (this.queues.get(lockName)?.length ?? 0) >= this.maxWaitersPerKey;
  }

  /** Joins the queue of `lockName`. Always call `ticket.leave()` in a finally. */
  enter(lockName: string, exclusive: boolean): Ticket {
    let queue = this.queues.get(lockName);
    if (!queue) {
      queue = new KeyQueue();
      this.queues.set(lockName, queue);
    }
    const ticket = new Ticket(exclusive, this, lockName);
    queue.push(ticket);
    if (queue.length === 1 || !exclusive) ticket.promote(true);
    return ticket;
  }

  /** The head waiter of `lockName`, if any. */
  head(lockName: string): Ticket | undefined {
    return this.queues.get(lockName)?.first;
  }

  /** How many waiters of this process queue on `lockName` (the head included). */
  waitersOf(lockName: string): number {
    return this.queues.get(lockName)?.length ?? 0;
  }

  /** The head waiter of `lockName` when it takes hand-offs (cohort kinds). */
  successor(lockName: string): QueuedWaiter | undefined {
    return this.queues.get(lockName)?.first?.waiter;
  }

  /** This process stopped holding `lockName` (released for real or lost): the head may attempt now. */
  notifyFree(lockName: string): void {
    this.head(lockName)?.waiter?.wake();
  }

  /** Number of locks with local waiters (for metrics and leak tests). */
  get size(): number {
    return this.queues.size;
  }

  /** Local waiters per lock name (reported by the inspection registry). */
  *waiting(): IterableIterator<[lockName: string, count: number]> {
    for (const [lockName, queue] of this.queues) yield [lockName, queue.length];
  }

  /** @internal Takes `ticket` out of its queue (Ticket.leave). */
  remove(lockName: string, ticket: Ticket, acquired: boolean): void {
    const queue = this.queues.get(lockName);
    if (!queue) return;
    const wasHead = queue.first === ticket;
    if (!queue.unlink(ticket)) return;
    if (queue.length === 0) {
      this.queues.delete(lockName);
      return;
    }
    // The new head attempts at once unless its predecessor just won the lock (then it waits for the wake-up).
    const head = queue.first!;
    if (wasHead && head.exclusive) head.promote(!acquired);
  }
}

/** One lock's queue: a doubly linked list through the tickets themselves (no per-node objects). */
class KeyQueue {
  first?: Ticket;
  last?: Ticket;
  length = 0;

  push(ticket: Ticket): void {
    ticket.queued = true;
    ticket.prev = this.last;
    if (this.last) this.last.next = ticket;
    else this.first = ticket;
    this.last = ticket;
    this.length++;
  }

  /** Removes `ticket`; false when it was not queued (left already). */
  unlink(ticket: Ticket): boolean {
    if (!ticket.queued) return false;
    ticket.queued = false;
    if (ticket.prev) ticket.prev.next = ticket.next;
    else this.first = ticket.next;
    if (ticket.next) ticket.next.prev = ticket.prev;
    else this.last = ticket.prev;
    ticket.prev = ticket.next = undefined;
    this.length--;
    return true;
  }
}

/**
 * A waiter's place in its local queue. A wait for its turn (true: reached) is a DeadlineWait, bounded
 * on the runtime's one heap: most turns come long before the deadline.
 */
export class Ticket extends DeadlineWait<boolean> {
  private head = false;
  private attemptNow = false;
  /** The waiter holding this place, when it takes hand-offs from a local holder (cohort kinds). */
  waiter?: QueuedWaiter;
  /** @internal Links of the queue's list. */
  prev?: Ticket;
  /** @internal */
  next?: Ticket;
  /** @internal True while in its queue. */
  queued = false;

  constructor(
    readonly exclusive: boolean,
    private readonly queues: LocalWaitQueues,
    private readonly lockName: string,
  ) {
    super(queues.runtime);
  }

  /** True while this ticket may attempt. */
  get isHead(): boolean {
    return this.head;
  }

  /** Whether the head should attempt right away (false: its predecessor holds the lock now). */
  takeAttemptNow(): boolean {
    const now = this.attemptNow;
    this.attemptNow = false;
    return now;
  }

  /** Resolves true when this ticket reaches the head, false after `ms` or on interrupt(). */
  turn(ms: number): Promise<boolean> {
    if (this.head) return Promise.resolve(true);
    return this.sleep(ms);
  }

  /** Ends a wait for the turn now, as not reached (the caller's abort, or close()). */
  interrupt(): void {
    this.end(false);
  }

  /** @internal The turn's deadline passed (Deadline). */
  expire(): void {
    this.end(false);
  }

  /** Leaves the queue; `acquired` tells the next head whether the lock was just taken. */
  leave(acquired: boolean): void {
    this.end(false);
    this.waiter = undefined;
    this.queues.remove(this.lockName, this, acquired);
  }

  /** @internal Makes this ticket the head. */
  promote(attemptNow: boolean): void {
    this.head = true;
    this.attemptNow = attemptNow;
    this.end(true);
  }
}
