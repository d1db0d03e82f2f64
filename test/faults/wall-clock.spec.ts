/**
 * Scenario 14: the client's wall clock jumps an hour forward or back (NTP step, VM resume).
 * Leases, waits and the watchdog run on the monotonic clock, so nothing may change: a fixed
 * lease still ends after its own length (not at once, not an hour late), a waiter still waits
 * its own waitMs, and the watchdog keeps renewing. Date.now is faked with jest.spyOn.
 */
import { LockLostError, LockNotAcquiredError } from '../../lib/core';
import { epochMs, round1 } from '../support/clock';
import { aborted, expectCleanRedis, faultEngine, lockKeyOf } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { sleep, waitUntil } from '../support/wait';
import type { LockEngine } from '../../lib/core';

const env = useFaultEnv();
const figures = faultFigures();
const HOUR = 3_600_000;
const realNow = Date.now.bind(Date);
const JUMPS: [string, number][] = [
  ['+1 h', HOUR],
  ['-1 h', -HOUR],
];

let engine: LockEngine;
beforeEach(() => {
  engine = faultEngine(env.redis.url);
});
afterEach(async () => {
  jest.restoreAllMocks();
  await engine.close();
});

/** From now on Date.now() is off by `offsetMs` (and keeps ticking). */
function jumpWallClock(offsetMs: number): void {
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
}

const measured: Record<string, unknown> = {};
afterAll(() =>
  figures.record('14-wall-clock-jump', {
    title: 'Client wall clock jumps ±1 h (Date.now faked)',
    ...measured,
  }),
);

describe('scenario 14: client wall clock jumps', () => {
  it.each(JUMPS)('ends a fixed lease after its own length when the clock jumps %s', async (label, offset) => {
    const lock = await engine.acquire(`clock:lease:${label}`, { leaseMs: 800 });
    const grantedAt = epochMs();
    const before = lock.remainingMs();
    jumpWallClock(offset);
    // Date.now() is the real clock plus the offset, read between two real readings (a millisecond
    // may tick between any two calls, so no single difference of two calls is exact).
    const [low, faked, high] = [realNow(), Date.now(), realNow()];
    expect(faked - offset).toBeGreaterThanOrEqual(low);
    expect(faked - offset).toBeLessThanOrEqual(high);
    await sleep(50);
    expect(lock.signal.aborted).toBe(false);
    expect(lock.remainingMs()).toBeGreaterThan(0);
    expect(lock.remainingMs()).toBeLessThanOrEqual(before);
    const reason = await aborted(lock.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('expired');
    measured[`fixedLease800EndedAfterMs(${label})`] = round1(epochMs() - grantedAt);
    // Redis drops the key on its own clock, a moment after the (conservative) local timer.
    await waitUntil(async () => (await env.admin.exists(lockKeyOf(`clock:lease:${label}`))) === 0);
    await expect(lock.release()).resolves.toBe(false);
    await expectCleanRedis(env.admin);
  });

  it.each(JUMPS)(
    'waits its own waitMs, no more and no less, when the clock jumps %s',
    async (label, offset) => {
      const key = `clock:wait:${label}`;
      const other = faultEngine(env.redis.url);
      try {
        const held = await other.acquire(key, { leaseMs: 20_000 });
        const timingOut = engine.acquire(key, { waitMs: 600 });
        const served = engine.acquire(key, { waitMs: 15_000 });
        const startedAt = epochMs();
        jumpWallClock(offset);
        const timedOut = await timingOut.catch((e: unknown) => e);
        expect(timedOut).toBeInstanceOf(LockNotAcquiredError);
        measured[`waitMs600GaveUpAfterMs(${label})`] = round1(epochMs() - startedAt);
        expect(await held.release()).toBe(true);
        const lock = await served;
        expect(lock.isHeld).toBe(true);
        expect(await lock.release()).toBe(true);
        await expectCleanRedis(env.admin);
      } finally {
        await other.close();
      }
    },
  );

  it.each(JUMPS)('keeps renewing a watchdog lease when the clock jumps %s', async (label, offset) => {
    const lock = await engine.acquire(`clock:watchdog:${label}`);
    let renewed = 0;
    engine.events.on('renewed', (r) => (renewed += r.renewed));
    jumpWallClock(offset);
    // Outlive the watchdog lease (WATCHDOG_LEASE_MS) well over once; only renewals keep the lock.
    await sleep(2500);
    expect(lock.signal.aborted).toBe(false);
    expect(lock.isHeld).toBe(true);
    expect(renewed).toBeGreaterThanOrEqual(2);
    expect(await env.admin.pttl(lockKeyOf(`clock:watchdog:${label}`))).toBeGreaterThan(0);
    measured[`watchdogRenewalsIn2500Ms(${label})`] = renewed;
    expect(await lock.release()).toBe(true);
    await expectCleanRedis(env.admin);
  });
});
