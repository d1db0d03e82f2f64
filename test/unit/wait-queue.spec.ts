/* Unit: the local FIFO of one process' waiters on one lock. */
import { LocalWaitQueues } from '../../lib/core/waiting/local-wait-queues';
import { nodeRuntime } from '../../lib/core/runtime/runtime';

describe('LocalWaitQueues', () => {
  it('lets only the head of an exclusive queue attempt, in arrival order', async () => {
    const queues = new LocalWaitQueues(nodeRuntime);
    const a = queues.enter('L', true);
    const b = queues.enter('L', true);
    const c = queues.enter('L', true);
    expect([a.isHead, b.isHead, c.isHead]).toEqual([true, false, false]);
    expect(a.takeAttemptNow()).toBe(true);
    const bTurn = b.turn(10_000);
    a.leave(false);
    expect(await bTurn).toBe(true);
    expect(b.takeAttemptNow()).toBe(true); // its predecessor gave up: attempt at once
    b.leave(true);
    expect(c.isHead).toBe(true);
    expect(c.takeAttemptNow()).toBe(false); // its predecessor won: wait for the wake-up
    c.leave(false);
    expect(queues.size).toBe(0);
  });

  it('lets every waiter of a shared kind attempt', () => {
    const queues = new LocalWaitQueues(nodeRuntime);
    const readers = [queues.enter('R', false), queues.enter('R', false)];
    expect(readers.map((t) => t.isHead)).toEqual([true, true]);
    readers.forEach((t) => t.leave(false));
    expect(queues.size).toBe(0);
  });

  it('removes a waiter from the middle without promoting anyone', () => {
    const queues = new LocalWaitQueues(nodeRuntime);
    const a = queues.enter('L', true);
    const b = queues.enter('L', true);
    const c = queues.enter('L', true);
    b.leave(false);
    expect(c.isHead).toBe(false);
    a.leave(false);
    expect(c.isHead).toBe(true);
    expect(queues.head('L')).toBe(c);
    c.leave(false);
  });

  it('ends a turn when interrupted (an abort) or when its time runs out', async () => {
    const queues = new LocalWaitQueues(nodeRuntime);
    const a = queues.enter('L', true);
    const b = queues.enter('L', true);
    const interrupted = b.turn(10_000);
    b.interrupt();
    expect(await interrupted).toBe(false);
    expect(nodeRuntime.deadlines.size).toBe(0);
    expect(await b.turn(1)).toBe(false);
    expect(nodeRuntime.deadlines.size).toBe(0);
    b.leave(false);
    a.leave(false);
  });

  it('tells the head when the lock is free of local holders', () => {
    const queues = new LocalWaitQueues(nodeRuntime);
    const a = queues.enter('L', true);
    const told: string[] = [];
    a.waiter = { wake: () => told.push('free') } as unknown as typeof a.waiter;
    queues.notifyFree('L');
    queues.notifyFree('other');
    expect(told).toEqual(['free']);
    a.leave(false);
  });
});
