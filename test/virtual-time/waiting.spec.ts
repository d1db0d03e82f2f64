/*
 * Waiting in virtual time (test/sim/virtual-lab.ts: every packet 0.5 ms each way): a call's waitMs ends
 * it on time to the millisecond; the safety-net polling doubles from 1 ms to its 128 ms cap; a release
 * wakes a waiter of another process within one message and one round trip, and when that message is
 * lost the polling still finds the lock free within a cap; an abort ends a wait at once; maxHoldMs ends a
 * renewed lock at its bound, and minHoldMs keeps one until it.
 */
import { LockLostError, LockNotAcquiredError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { leaseDriftMs } from '../../lib/core/runtime/lease-drift';
import { VirtualLab } from '../sim/virtual-lab';

const mutexLock = (key: string): string => new KeySpace('lock:').names(key, 'm').lock;

let lab: VirtualLab;
beforeEach(() => {
  lab = new VirtualLab();
});
afterEach(async () => {
  await lab.close();
});

/**
 * Releases `held` and expects the watched wait to be granted by the release's message: it arrives
 * 0.5 ms after the release ran, and the attempt it starts takes one round trip.
 */
async function releaseWakes(held: LockHandle, call: { at?: number; value?: LockHandle }): Promise<void> {
  await lab.settle(held.release());
  const release = lab.server.runs.filter((r) => r.script.endsWith('release')).at(-1)!;
  await lab.until(() => call.at !== undefined);
  expect(call.value).toBeDefined();
  expect(call.at! - release.at).toBeCloseTo(1.5, 6);
}

describe('waitMs', () => {
  it.each<[string, LockOptions]>([
    ['reentrant mutex (cohorts, watchdog)', {}],
    ['token lock, fixed lease', { reentrant: false, leaseMs: 60_000 }],
    ['read-write lock, writer behind a reader', { mode: 'write' }],
    ['semaphore of limit 1', { limit: 1 }],
    ['fair lock', { fair: true }],
  ])('ends a wait on a %s at waitMs, with one last attempt at the deadline', async (_kind, options) => {
    const holder = await lab.warmProcess();
    const waiter = await lab.warmProcess();
    await lab.warm(holder.engine, options);
    await lab.warm(waiter.engine, options);
    const held = await lab.settle(
      holder.engine.acquire('sku:1', 'mode' in options ? { mode: 'read' } : { ...options, leaseMs: 60_000 }),
    );
    const startedAt = lab.now;
    const call = lab.watch(waiter.engine.acquire('sku:1', { ...options, waitMs: 750 }));
    await lab.until(() => call.at !== undefined);
    expect(call.error).toBeInstanceOf(LockNotAcquiredError);
    // Its last sleep ends at the deadline (startedAt + 750: its clock runs at true rate here), where it
    // tries once more: the call answers with that attempt's busy reply, one round trip later.
    const last = lab.server.runs.filter((r) => r.script.endsWith('acquire')).at(-1)!;
    expect(last.at).toBeCloseTo(startedAt + 750 + 0.5, 6);
    expect(call.at).toBeCloseTo(startedAt + 750 + 1, 6);
    expect(waiter.engine.stats()).toMatchObject({ held: 0 });
    expect(await lab.settle(held.release())).toBe(true);
  });

  it('tryAcquire() answers null after one attempt, within one round trip', async () => {
    const holder = await lab.warmProcess();
    const waiter = await lab.warmProcess();
    const held = await lab.settle(holder.engine.acquire('sku:2'));
    const startedAt = lab.now;
    expect(await lab.settle(waiter.engine.tryAcquire('sku:2'))).toBeNull();
    expect(lab.now - startedAt).toBeCloseTo(1, 6);
    await lab.settle(held.release());
  });
});

describe('polling, the safety net under pub/sub', () => {
  it('doubles from 1 ms to the 128 ms cap between attempts while every message is lost', async () => {
    const holder = await lab.warmProcess();
    // Without cohorts a waiter polls on the doubling backoff (a cohort kind's waiter is recorded in
    // Redis and sleeps the cap between polls: the release publishes for it).
    const waiter = await lab.warmProcess({ cohort: false });
    const options = { reentrant: false, leaseMs: 60_000 };
    await lab.warm(waiter.engine, options);
    const held = await lab.settle(holder.engine.acquire('sku:3', options));
    waiter.network.dropMessage = 1;
    const since = lab.now;
    const call = lab.watch(waiter.engine.acquire('sku:3', { ...options, waitMs: 2_000 }));
    await lab.advance(1_500);
    const attempts = lab.runs('token-acquire', since).map((r) => r.at);
    const gaps = attempts.slice(1).map((at, i) => Math.round((at - attempts[i]!) * 1000) / 1000);
    // A try, then one more once subscribed (a release may fall in between), then the sleeps: each later
    // gap is one sleep plus a round trip (1 ms).
    const sleeps = gaps.slice(1).map((g) => g - 1);
    expect(sleeps.slice(0, 9)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 128]);
    expect(new Set(sleeps.slice(7))).toEqual(new Set([128]));

    // The release publishes, the message is lost: the next poll finds the lock free.
    const releasedAt = lab.now;
    expect(await lab.settle(held.release())).toBe(true);
    await lab.until(() => call.at !== undefined);
    expect(call.value).toBeDefined();
    expect(call.at! - releasedAt).toBeLessThanOrEqual(128 + 1 + 1 + 1e-6);
    await lab.settle(call.value!.release());
  });

  it('sleeps no longer than the holder has left of its lease', async () => {
    const holder = await lab.warmProcess();
    const waiter = await lab.warmProcess();
    const options = { reentrant: false };
    await lab.warm(waiter.engine, { ...options, leaseMs: 1_000 });
    await lab.settle(holder.engine.acquire('sku:4', { ...options, leaseMs: 300 }));
    const expiresAt = lab.runs('token-acquire').at(-1)!.at + 300;
    // The holder's process stops (SIGSTOP): it neither releases nor learns anything.
    holder.process.pause(60_000);
    waiter.network.dropMessage = 1;
    const call = lab.watch(waiter.engine.acquire('sku:4', { ...options, leaseMs: 1_000, waitMs: 5_000 }));
    await lab.until(() => call.at !== undefined);
    expect(call.value).toBeDefined();
    // Granted at the first attempt after Redis let the key go, within a cap and a round trip.
    expect(call.at!).toBeGreaterThan(expiresAt);
    expect(call.at! - expiresAt).toBeLessThanOrEqual(128 + 1 + 1e-6);
  });
});

describe('wake-ups', () => {
  it.each<[string, LockOptions]>([
    ['reentrant mutex', {}],
    ['token lock, fixed lease', { reentrant: false, leaseMs: 60_000 }],
    ['semaphore of limit 1', { limit: 1 }],
    ['fair lock', { fair: true }],
  ])('a release wakes a %s waiter of another process: one message, one attempt', async (_kind, options) => {
    const holder = await lab.warmProcess({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const waiter = await lab.warmProcess({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    await lab.warm(holder.engine, options);
    await lab.warm(waiter.engine, options);
    const held = await lab.settle(holder.engine.acquire('sku:5', options));
    const call = lab.watch(waiter.engine.acquire('sku:5', { ...options, waitMs: 600_000 }));
    // Polling could never end this wait in time: only the release's message can.
    await lab.advance(5_000);
    expect(call.at).toBeUndefined();
    await releaseWakes(held, call);
    expect(call.value!.fencingToken).toBeGreaterThan(held.fencingToken);
    await lab.settle(call.value!.release());
  });

  it('an abort ends a wait at once, and the release after it wakes nobody', async () => {
    const holder = await lab.warmProcess();
    const waiter = await lab.warmProcess();
    const held = await lab.settle(holder.engine.acquire('sku:6'));
    const controller = new AbortController();
    const call = lab.watch(waiter.engine.acquire('sku:6', { waitMs: 600_000, signal: controller.signal }));
    await lab.advance(1_000);
    const reason = new Error('the client went away');
    const abortedAt = lab.now;
    controller.abort(reason);
    await lab.until(() => call.at !== undefined);
    expect(call.error).toBe(reason);
    expect(call.at).toBe(abortedAt);
    expect(waiter.engine.stats()).toMatchObject({ held: 0 });
    const since = lab.now;
    await lab.settle(held.release());
    await lab.advance(1_000);
    expect(lab.runs('mutex-acquire', since)).toHaveLength(0);
  });

  it('asks again for a subscription left unanswered on a live connection: a later release still wakes', async () => {
    // Issue 43 (simulator seeds 678 and 1554): a SUBSCRIBE a partition swallowed, its connection up,
    // counted as joined for as long as the lock stayed contended; no release message woke its waiters.
    const holder = await lab.warmProcess();
    const waiter = await lab.warmProcess();
    const held = await lab.settle(holder.engine.acquire('sku:7'));
    const since = lab.now;
    const call = lab.watch(waiter.engine.acquire('sku:7', { waitMs: 600_000 }));
    await lab.until(() => lab.runs('mutex-acquire', since).length === 1);
    // Its busy reply is on the way; the SUBSCRIBE it sends on arrival is lost, and nothing else.
    waiter.network.partitioned.add(lab.server.name);
    await lab.advance(2);
    waiter.network.partitioned.delete(lab.server.name);
    // Past the confirmation bound (commandTimeoutMs, 5 s), on polling meanwhile.
    await lab.advance(8_000);
    expect(call.at).toBeUndefined();
    await releaseWakes(held, call);
    await lab.settle(call.value!.release());
  });
});

describe('hold bounds', () => {
  it('maxHoldMs: the watchdog renews until it, then the lock ends and another process takes it', async () => {
    const holder = await lab.warmProcess({ watchdogLeaseMs: 300, renewEveryMs: 100 });
    const other = await lab.warmProcess();
    const handle = await lab.settle(holder.engine.acquire('job:1', { maxHoldMs: 1_200 }));
    const grantedAt = lab.now;
    const requestLeft = lab.runs('mutex-acquire').at(-1)!.at - 0.5;
    const ended = lab.abortOf(handle.signal);
    const next = lab.watch(other.engine.acquire('job:1', { waitMs: 5_000 }));
    await lab.until(() => ended.at !== undefined);
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(handle.signal.reason).toMatchObject({ reason: 'max-hold' });
    // The watchdog renewed it well past its 300 ms lease, and the end came at grant + maxHoldMs.
    expect(lab.runs('renew', grantedAt).length).toBeGreaterThanOrEqual(10);
    // (Like any lease end, a drift allowance early: that of the last renewal's lease, at most 300 ms.)
    expect(ended.at!).toBeLessThanOrEqual(requestLeft + 1_200);
    expect(ended.at!).toBeGreaterThanOrEqual(requestLeft + 1_200 - leaseDriftMs(300));
    expect(lab.pttl(mutexLock('job:1'))).toBeGreaterThan(0);
    // The last renewal asked for no more than maxHoldMs left: Redis lets the key go by itself then.
    await lab.until(() => next.at !== undefined);
    expect(next.value!.fencingToken).toBeGreaterThan(handle.fencingToken);
    expect(next.at! - (requestLeft + 1_200)).toBeLessThanOrEqual(128 + 2);
    await lab.settle(next.value!.release());
  });

  it('minHoldMs: a release before it keeps the lock in Redis until grant + minHoldMs', async () => {
    const holder = await lab.warmProcess({ watchdogLeaseMs: 300, renewEveryMs: 100 });
    const handle = await lab.settle(holder.engine.acquire('job:2', { minHoldMs: 2_000 }));
    const requestLeft = lab.runs('mutex-acquire').at(-1)!.at - 0.5;
    await lab.advance(500);
    expect(await lab.settle(handle.release())).toBe(true);
    const lock = mutexLock('job:2');
    // Released by its holder, held by Redis for what is left of minHoldMs, and not renewed after.
    expect(lab.pttl(lock)).toBeGreaterThan(0);
    const since = lab.now;
    // The grant's script ran half a millisecond after its request left: Redis counts from then.
    await lab.advance(requestLeft + 0.5 + 2_000 - lab.now - 0.25);
    expect(lab.pttl(lock)).toBeGreaterThan(0);
    await lab.advance(0.5);
    expect(lab.pttl(lock)).toBe(-2);
    expect(lab.runs('renew', since)).toHaveLength(0);
  });
});
