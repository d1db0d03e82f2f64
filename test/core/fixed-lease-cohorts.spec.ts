/*
 * Per-process cohorts with a fixed `leaseMs` (issue 17): a release hands the lock to the next local
 * waiter that asked for a fixed lease too, without a Redis command; each local holder's lease is its
 * own `leaseMs` from its own grant, never less, and the Redis key's PTTL always covers what the
 * holder believes it has left (`remainingMs()`). A waiter whose lease the Redis lease cannot cover,
 * or that asked for the other lease mode, gets the lock through Redis instead.
 */
import { leaseDriftMs } from '../../lib/core/runtime/lease-drift';
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
} from '../support/lock-env';

const PREFIX = 'fixed-cohort:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
const LEASE_MS = 20_000;

/** Cohorts with a generous time budget: a busy machine must not end them by the default 50 ms. */
const cohortEngine = () => env.engine({ keyPrefix: PREFIX, cohort: { passes: 32, budgetMs: 60_000 } });

function acquisitions(engine: ReturnType<LockEnv['engine']>, key: string): EventPayload<'acquired'>[] {
  const seen: EventPayload<'acquired'>[] = [];
  engine.events.on('acquired', (e) => {
    if (e.key === key) seen.push(e);
  });
  return seen;
}

/** The Redis lease left, read before and after the holder's own view so it brackets it. */
async function expectRedisCovers(handle: LockHandle, lockName: string): Promise<void> {
  const local = handle.remainingMs();
  const pttl = await env.admin.pttl(lockName);
  expect(local).toBeGreaterThan(0);
  expect(pttl).toBeGreaterThanOrEqual(Math.floor(local));
}

describe('per-process cohorts with a fixed lease', () => {
  it('hands a fixed-lease lock over locally, each holder with its own whole lease covered by the PTTL', async () => {
    const engine = cohortEngine();
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('fixed');
    const lockName = keys.names(key).lock;
    const seen = acquisitions(engine, key);
    // Busy elsewhere while four callers queue here: the first is granted in Redis with waiters behind it.
    const gate = await other.acquire(key, { leaseMs: LEASE_MS });
    const waiters = Array.from({ length: 4 }, () =>
      track(engine.acquire(key, { waitMs: 30_000, leaseMs: LEASE_MS })),
    );
    await nextEvent(engine, 'contended', (e) => e.key === key);
    await gate.release();
    let holder = await waiters[0]!.result;
    await expectRedisCovers(holder, lockName);
    for (let i = 1; i < waiters.length; i++) {
      let next!: LockHandle;
      let sentAt = 0;
      let left = 0;
      let tookMs = 0;
      const commands = await commandsDuring(env.server.port, async () => {
        sentAt = performance.now();
        expect(await holder.release()).toBe(true);
        next = await waiters[i]!.result;
        left = next.remainingMs();
        tookMs = performance.now() - sentAt;
      });
      // No lock script went to Redis for the hand-off.
      expect((commands.evalsha ?? 0) + (commands.eval ?? 0)).toBe(0);
      expect(next.fencingToken).toBe(holder.fencingToken + 1);
      // Its own whole lease from its own grant (made after the release was called), never less; the
      // handle counts to the local lease end, the drift allowance before Redis' (lease-drift.ts).
      expect(left).toBeGreaterThanOrEqual(LEASE_MS - leaseDriftMs(LEASE_MS) - tookMs);
      expect(left).toBeLessThanOrEqual(LEASE_MS);
      await expectRedisCovers(next, lockName);
      holder = next;
    }
    expect(seen.map((e) => e.handedOver === true)).toEqual([false, true, true, true]);
    expect(await holder.release()).toBe(true);
    expect(await env.admin.exists(lockName)).toBe(0);
  });

  it('extends nothing for a lone fixed-lease holder: its PTTL stays within its own lease', async () => {
    const engine = cohortEngine();
    const key = uniqueKey('alone');
    const handle = await engine.acquire(key, { leaseMs: LEASE_MS });
    const pttl = await env.admin.pttl(keys.names(key).lock);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(LEASE_MS);
    expect(await handle.release()).toBe(true);
  });

  it('goes through Redis for a waiter whose lease the Redis lease cannot cover, or of the other lease mode', async () => {
    // A 1 s budget: the first grant's Redis lease (2 s + 1 s) cannot cover a 20 s lease.
    const engine = env.engine({ keyPrefix: PREFIX, cohort: { passes: 32, budgetMs: 1_000 } });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('uncovered');
    const lockName = keys.names(key).lock;
    const seen = acquisitions(engine, key);
    const gate = await other.acquire(key, { leaseMs: LEASE_MS });
    const first = track(engine.acquire(key, { waitMs: 30_000, leaseMs: 2_000 }));
    const longer = track(engine.acquire(key, { waitMs: 30_000, leaseMs: LEASE_MS }));
    const watchdog = track(engine.acquire(key, { waitMs: 30_000 }));
    await nextEvent(engine, 'contended', (e) => e.key === key);
    await gate.release();
    const a = await first.result;
    expect(await a.release()).toBe(true);
    const b = await longer.result;
    // Granted in Redis (a fresh block of tokens), its whole 20 s lease set there.
    expect(b.fencingToken).toBeGreaterThan(a.fencingToken + 1);
    await expectRedisCovers(b, lockName);
    expect(b.remainingMs()).toBeGreaterThan(2_000);
    expect(await b.release()).toBe(true);
    const c = await watchdog.result;
    expect(c.fencingToken).toBeGreaterThan(b.fencingToken + 1);
    expect(seen.map((e) => e.handedOver === true)).toEqual([false, false, false]);
    expect(await c.release()).toBe(true);
  });
});
