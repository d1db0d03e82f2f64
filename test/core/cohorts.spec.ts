/*
 * Per-process cohorts: a release hands the lock to the next waiter of the same process without a
 * Redis round trip — but never a lease that may be dead, never past a nested hold, never to a waiter
 * that gave up, never after close(); a loss mid-cohort reaches the current holder and sends the
 * queued waiters back to Redis. (Mutual exclusion, tokens, shares and the consecutive-grant bound
 * across processes: mutual-exclusion.spec.ts.)
 */
import { KeySpace } from '../../lib/core/internal';
import type { LockHandle } from '../../lib/core';
import {
  commandsDuring,
  EventPayload,
  LockEnv,
  nextEvent,
  track,
  uniqueKey,
  useLockEnv,
  whenAborted,
  mutexState,
} from '../support/lock-env';
import { waitUntil } from '../support/wait';

const PREFIX = 'cohort:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();

/**
 * An engine whose cohorts have a generous time budget: these tests pause on purpose while a cohort
 * holds the lock, and a busy machine must not end the cohort by its 50 ms budget.
 */
const cohortEngine = (options: Parameters<LockEnv['engine']>[0] = {}) =>
  env.engine({ keyPrefix: PREFIX, cohort: { budgetMs: 60_000 }, ...options });

/** Collects `acquired` events of one key. */
function acquisitions(engine: ReturnType<LockEnv['engine']>, key: string): EventPayload<'acquired'>[] {
  const seen: EventPayload<'acquired'>[] = [];
  engine.events.on('acquired', (e) => {
    if (e.key === key) seen.push(e);
  });
  return seen;
}

/** Resolves once the engine reports a waiter for `key` found the lock taken (locally or in Redis). */
const contended = (engine: ReturnType<LockEnv['engine']>, key: string) =>
  nextEvent(engine, 'contended', (e) => e.key === key);

describe('per-process cohorts', () => {
  it('hands the lock to a local waiter with its own token and signal, without a Redis command', async () => {
    const engine = cohortEngine();
    const key = uniqueKey('pass');
    const seen = acquisitions(engine, key);
    const first = await engine.acquire(key);
    const waiting = contended(engine, key);
    const second = track(engine.acquire(key, { waitMs: 10_000 }));
    await waiting;
    const commands = await commandsDuring(env.server.port, async () => {
      expect(await first.release()).toBe(true);
      await second.result;
    });
    const next = await second.result;
    expect(seen.map((e) => e.handedOver === true)).toEqual([false, true]);
    expect(next.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(next.signal).not.toBe(first.signal);
    expect(first.isHeld).toBe(false);
    expect(next.isHeld).toBe(true);
    // The hand-off itself sent no lock script (EVALSHA/EVAL) to Redis.
    expect((commands.evalsha ?? 0) + (commands.eval ?? 0)).toBe(0);
    expect((await mutexState(env.admin, keys.names(key).lock))?.owner).toBeTruthy();
    expect(await next.release()).toBe(true);
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  });

  it('does not let the previous holder’s async context re-enter after a hand-off', async () => {
    const engine = cohortEngine();
    const key = uniqueKey('stale-context');
    let releaseFirst!: () => void;
    const gate = new Promise<void>((resolve) => (releaseFirst = resolve));
    let staleAttempt!: Promise<LockHandle | null>;
    const first = engine.using(key, {}, async (lock) => {
      await gate;
      // Still inside the first holder's context, but its lock is about to be handed over.
      staleAttempt = lock.release().then(() => engine.tryAcquire(key));
      await staleAttempt;
    });
    const waiting = contended(engine, key);
    const second = track(engine.acquire(key, { waitMs: 10_000 }));
    await waiting;
    releaseFirst();
    await first;
    const next = await second.result;
    expect(await staleAttempt).toBeNull(); // the new holder's lock, not a re-entry
    expect(next.isHeld).toBe(true);
    await next.release();
  });

  it('never hands over a lease that may be dead: an event loop blocked past the lease', async () => {
    const engine = cohortEngine({ watchdogLeaseMs: 300, renewEveryMs: 100 });
    const key = uniqueKey('paused');
    const seen = acquisitions(engine, key);
    const holder = await engine.acquire(key);
    const waiting = contended(engine, key);
    const successor = track(engine.acquire(key, { waitMs: 10_000 }));
    await waiting;
    // Block the event loop past the lease: Redis expires the lock, the watchdog cannot renew it.
    const until = performance.now() + 600;
    while (performance.now() < until) {
      /* blocked, as a GC pause or CPU-bound code would */
    }
    expect(await holder.release()).toBe(false); // the lease was gone: reported, not handed over
    const next = await successor.result;
    expect(seen.map((e) => e.handedOver === true)).toEqual([false, false]); // a fresh Redis grant
    expect(next.fencingToken).toBeGreaterThan(holder.fencingToken);
    await next.release();
  });

  it('sends queued waiters back to Redis when the holder’s lock is deleted mid-cohort', async () => {
    const engine = cohortEngine({ watchdogLeaseMs: 300, renewEveryMs: 50 });
    const key = uniqueKey('deleted');
    const seen = acquisitions(engine, key);
    const holder = await engine.acquire(key);
    const waiting = contended(engine, key);
    const successor = track(engine.acquire(key, { waitMs: 10_000 }));
    await waiting;
    await env.admin.del(keys.names(key).lock);
    expect(await whenAborted(holder.signal)).toMatchObject({ name: 'LockLostError', reason: 'deleted' });
    const next = await successor.result;
    expect(seen.map((e) => e.handedOver === true)).toEqual([false, false]);
    expect(next.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(await holder.release()).toBe(false);
    await next.release();
  });

  it('does not hand over while a nested hold is open; the outer release does', async () => {
    const engine = cohortEngine();
    const key = uniqueKey('nested');
    const seen = acquisitions(engine, key);
    const outer = await engine.acquire(key);
    const inner = await engine.runInLock(outer, () => engine.acquire(key));
    const waiting = contended(engine, key);
    const sibling = track(engine.acquire(key, { waitMs: 10_000 }));
    await waiting;
    expect(await inner.release()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sibling.settled).toBe(false); // the outer hold still has the lock
    expect(await outer.release()).toBe(true);
    const next = await sibling.result;
    expect(seen.at(-1)?.handedOver).toBe(true);
    await next.release();
  });

  it('skips a waiter that gave up (aborted) and hands the lock to the next one', async () => {
    const engine = cohortEngine();
    const key = uniqueKey('aborted');
    const seen = acquisitions(engine, key);
    const holder = await engine.acquire(key);
    const abort = new AbortController();
    const waiting = contended(engine, key);
    const gaveUp = track(engine.acquire(key, { waitMs: 10_000, signal: abort.signal }));
    await waiting; // the head of the local queue
    const patient = track(engine.acquire(key, { waitMs: 10_000 })); // queued behind it
    abort.abort(new Error('gave up'));
    await expect(gaveUp.result).rejects.toThrow('gave up');
    expect(await holder.release()).toBe(true);
    const next = await patient.result;
    expect(seen.at(-1)?.handedOver).toBe(true);
    expect(next.fencingToken).toBeGreaterThan(holder.fencingToken);
    await next.release();
  });

  it('close() mid-cohort fails the waiters, ends the holder and leaves Redis clean', async () => {
    const engine = cohortEngine();
    const key = uniqueKey('close');
    const first = await engine.acquire(key);
    const waiting = contended(engine, key);
    const second = track(engine.acquire(key, { waitMs: 10_000 }));
    await waiting;
    expect(await first.release()).toBe(true); // handed over to `second`
    const holder = await second.result;
    const third = track(engine.acquire(key, { waitMs: 10_000 }));
    await engine.close();
    await expect(third.result).rejects.toThrow(/shutting down/);
    expect(holder.signal.aborted).toBe(true);
    await waitUntil(async () => (await env.admin.exists(keys.names(key).lock)) === 0, {
      description: 'the lock key gone after close()',
    });
    expect(await env.admin.keys(`${PREFIX}{${key}}:m*`)).toEqual([]);
  });

  it('can be turned off: every grant then comes from Redis', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, cohort: false });
    const key = uniqueKey('off');
    const seen = acquisitions(engine, key);
    const first = await engine.acquire(key);
    const second = track(engine.acquire(key, { waitMs: 10_000 }));
    await waitUntil(() => seen.length === 1 && !second.settled, { description: 'the second waiting' });
    await first.release();
    await (await second.result).release();
    expect(seen.map((e) => e.handedOver === true)).toEqual([false, false]);
  });
});
