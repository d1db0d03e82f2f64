/**
 * Scenario 10: releases that must not touch anything. A second release of the same hold, a
 * release after the lease ran out, and a release by a former owner once another owner took the
 * lock all resolve false (never throw) and leave the current holder's key exactly as it was.
 */
import { aborted, expectCleanRedis, faultEngine, lockKeyOf } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { waitUntil } from '../support/wait';
import type { LockEngine } from '../../lib/core';

const env = useFaultEnv();
const figures = faultFigures();
const KINDS: [string, boolean][] = [
  ['reentrant mutex', true],
  ['token lock', false],
];

/** The Redis state of a lock key: type, value and TTL bucket (TTL only decreases while untouched). */
async function snapshot(key: string) {
  const redisKey = lockKeyOf(key);
  const type = await env.admin.type(redisKey);
  const value = type === 'hash' ? await env.admin.hgetall(redisKey) : await env.admin.get(redisKey);
  return { type, value, pttl: await env.admin.pttl(redisKey) };
}

let a: LockEngine;
let b: LockEngine;
beforeEach(() => {
  a = faultEngine(env.redis.url);
  b = faultEngine(env.redis.url);
});
afterEach(async () => {
  await Promise.all([a.close(), b.close()]);
});

const results: Record<string, unknown> = {};
afterAll(() =>
  figures.record('10-release-misuse', {
    title: 'Double release, release after expiry, release by a former owner',
    ...results,
  }),
);

describe('scenario 10: releases that must change nothing', () => {
  it.each(KINDS)(
    'answers false to a second release of the same hold and leaves the new holder alone (%s)',
    async (label, reentrant) => {
      const key = `double:${label}`;
      const first = await a.acquire(key, { reentrant, leaseMs: 30_000 });
      expect(await first.release()).toBe(true);
      const second = await b.acquire(key, { reentrant, leaseMs: 30_000 });
      const before = await snapshot(key);
      await expect(first.release()).resolves.toBe(false);
      const after = await snapshot(key);
      expect(after.value).toEqual(before.value);
      expect(after.pttl).toBeLessThanOrEqual(before.pttl);
      expect(await second.release()).toBe(true);
      results[`secondRelease-${reentrant ? 'mutex' : 'token'}`] = { result: false, keyUntouched: true };
      await expectCleanRedis(env.admin);
    },
  );

  it.each(KINDS)(
    'answers false to a release after the lease ran out, with and without a new holder (%s)',
    async (label, reentrant) => {
      const key = `expired:${label}`;
      const lapsed = await a.acquire(key, { reentrant, leaseMs: 300 });
      const reason = await aborted(lapsed.signal);
      expect(reason).toMatchObject({ name: 'LockLostError', reason: 'expired' });
      // The local timer counts from before the request was sent, so it fires a little before Redis
      // drops the key (the safe side); "after expiry" means once Redis has dropped it.
      await waitUntil(async () => (await env.admin.exists(lockKeyOf(key))) === 0, {
        description: 'the lease to end in Redis',
      });
      await expect(lapsed.release()).resolves.toBe(false);

      const lapsedAgain = await a.acquire(key, { reentrant, leaseMs: 300 });
      await aborted(lapsedAgain.signal);
      const next = await b.acquire(key, { reentrant, leaseMs: 30_000, waitMs: 5000 });
      const before = await snapshot(key);
      await expect(lapsedAgain.release()).resolves.toBe(false);
      const after = await snapshot(key);
      expect(after.value).toEqual(before.value);
      expect(after.pttl).toBeLessThanOrEqual(before.pttl);
      expect(next.signal.aborted).toBe(false);
      expect(await next.release()).toBe(true);
      results[`releaseAfterExpiry-${reentrant ? 'mutex' : 'token'}`] = { result: false, keyUntouched: true };
      await expectCleanRedis(env.admin);
    },
  );

  it.each(KINDS)(
    'answers false when a former owner releases a lock another owner took over (%s)',
    async (label, reentrant) => {
      const key = `takeover:${label}`;
      const former = await a.acquire(key, { reentrant, leaseMs: 300 });
      // The new owner takes over as soon as the lease is gone in Redis, maybe before the former owner's timer fired.
      const current = await b.acquire(key, { reentrant, leaseMs: 30_000, waitMs: 10_000 });
      expect(current.fencingToken).toBeGreaterThan(former.fencingToken);
      const before = await snapshot(key);
      await expect(former.release()).resolves.toBe(false);
      await expect(former.extend()).rejects.toMatchObject({ name: 'LockLostError' });
      const after = await snapshot(key);
      expect(after.value).toEqual(before.value);
      expect(after.pttl).toBeLessThanOrEqual(before.pttl);
      expect(after.pttl).toBeGreaterThan(0);
      expect(former.signal.aborted).toBe(true);
      expect(current.isHeld).toBe(true);
      expect(await current.release()).toBe(true);
      results[`releaseByFormerOwner-${reentrant ? 'mutex' : 'token'}`] = {
        result: false,
        keyUntouched: true,
      };
      await expectCleanRedis(env.admin);
    },
  );

  it('counts nested holds: each release removes one hold and a repeated release removes none', async () => {
    const key = 'nested';
    const outer = await a.acquire(key, { leaseMs: 30_000 });
    await a.runInLock(outer, async () => {
      const inner = await a.acquire(key);
      expect(inner.fencingToken).toBe(outer.fencingToken);
      expect(await inner.release()).toBe(true);
      expect(await inner.release()).toBe(false);
      expect(await env.admin.exists(lockKeyOf(key))).toBe(1);
    });
    expect(await env.admin.exists(lockKeyOf(key))).toBe(1);
    expect(await outer.release()).toBe(true);
    expect(await env.admin.exists(lockKeyOf(key))).toBe(0);
    await expectCleanRedis(env.admin);
  });
});
