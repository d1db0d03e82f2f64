/*
 * Multi-key locks on the in-memory testing backend, which has no multi-key script: every key is its
 * own group (PerKeyLocker), still all or none and deadlock-free.
 */
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { createInMemoryLockEngine } from '../../lib/testing/create-in-memory-lock-engine';

let a: LockEngine;
let b: LockEngine;
beforeEach(() => {
  a = createInMemoryLockEngine();
  b = createInMemoryLockEngine({ replicaOf: a });
});
afterEach(async () => {
  await Promise.all([a.close(), b.close()]);
});

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('takes all keys or none, key by key', async () => {
  const held = await b.acquire('y');
  expect(await a.tryAcquire(['x', 'y', 'z'])).toBeNull();
  expect(await b.tryAcquire('x')).not.toBeNull(); // x was given back
  await held.release();
  const all = await a.acquire(['z', 'y'], { waitMs: 0 });
  expect(all.keys).toEqual(['y', 'z']);
  expect(await all.release()).toBe(true);
});

it('never deadlocks or loses an update with opposite orders across two engines', async () => {
  const counters = { p: 0, q: 0, r: 0 };
  const orders: (keyof typeof counters)[][] = [
    ['p', 'q', 'r'],
    ['r', 'q', 'p'],
    ['q', 'p'],
    ['r', 'p'],
  ];
  const caller = async (engine: LockEngine, order: (keyof typeof counters)[]): Promise<void> => {
    for (let i = 0; i < 50; i++) {
      await engine.using(order, { waitMs: 30_000 }, async () => {
        const before = order.map((k) => counters[k]);
        await tick();
        order.forEach((k, j) => (counters[k] = before[j]! + 1));
      });
    }
  };
  await Promise.all(orders.flatMap((order) => [caller(a, order), caller(b, order)]));
  expect(counters).toEqual({ p: 400, q: 300, r: 300 });
});

describe('semaphore permits in memory (as semaphore-acquire.lua)', () => {
  it('takes several permits all or none, gives them back together, and reserves for a waiter', async () => {
    const three = await a.acquire('sem', { limit: 5, permits: 3, waitMs: 0 });
    expect(await b.tryAcquire('sem', { limit: 5, permits: 3 })).toBeNull();
    const two = await b.acquire('sem', { limit: 5, permits: 2, waitMs: 0 });
    // A waiting 5-permit request reserves: a new 1-permit request may not slip in ahead of it.
    const five = b.acquire('sem', { limit: 5, permits: 5, waitMs: 30_000 });
    await three.release();
    await tick();
    expect(await a.tryAcquire('sem', { limit: 5 })).toBeNull();
    await two.release();
    const all = await five;
    expect(await all.release()).toBe(true);
    const one = await a.acquire('sem', { limit: 5, waitMs: 0 });
    expect(await one.release()).toBe(true);
  });
});
