/*
 * extend() and re-entry keep the handle and Redis in agreement (issue 18, point 3; the extend()
 * row of the bad-input table in RELIABILITY.md): extend() takes the same validation as leaseMs
 * (refused before any command, the lock untouched), a re-entry that moves the lease in Redis moves
 * it locally too. That a fixed lease ends locally before Redis can give the lock to anyone else is
 * test/virtual-time/leases.spec.ts (exact in virtual time).
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { commandsDuring, uniqueKey, useLockEnv } from '../support/lock-env';
import { sleep } from '../support/wait';
import { engineOnConnectedClient } from '../support/refusal';

const PREFIX = 'extend:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;

let warnings: Error[] = [];
const onWarning = (w: Error): void => {
  warnings.push(w);
};
beforeEach(async () => {
  engine = await engineOnConnectedClient(env, PREFIX);
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

describe('extend() validates like leaseMs', () => {
  it.each([
    ['0', 0, RangeError, /^leaseMs must be at least 1, got 0/],
    ['-1', -1, RangeError, /^leaseMs must be at least 1, got -1/],
    ['NaN', NaN, RangeError, /^leaseMs must be finite, got NaN/],
    ['1.5', 1.5, RangeError, /^leaseMs must be a whole number of milliseconds, got 1.5/],
    ['2 ** 31', 2 ** 31, RangeError, /^leaseMs must be at most 2147483647/],
    ['a string', '100', TypeError, /^leaseMs must be a number of milliseconds/],
  ])(
    'refuses extend(%s) before any command; the lock stays held here and in Redis',
    async (_l, value, type, message) => {
      const key = uniqueKey('bad-extend');
      const handle = await engine.acquire(key, { waitMs: 0, leaseMs: 5_000 });
      const sent = await commandsDuring(env.server.port, async () => {
        const err = (await handle.extend(value as number).catch((e: unknown) => e)) as Error;
        expect(err).toBeInstanceOf(type);
        expect(err.message).toMatch(message);
      });
      expect(sent).toEqual({});
      expect(handle.isHeld).toBe(true);
      expect(handle.signal.aborted).toBe(false);
      const pttl = await env.admin.pttl(keys.names(key).lock);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(5_000);
      expect(warnings.map((w) => w.name)).not.toContain('TimeoutOverflowWarning');
      expect(await handle.release()).toBe(true);
    },
  );

  it('still extends with a valid lease, locally and in Redis', async () => {
    const key = uniqueKey('extend');
    const handle = await engine.acquire(key, { waitMs: 0, leaseMs: 1_000 });
    await handle.extend(20_000);
    expect(await env.admin.pttl(keys.names(key).lock)).toBeGreaterThan(10_000);
    expect(handle.remainingMs()).toBeGreaterThan(10_000);
    expect(await handle.release()).toBe(true);
  });
});

describe('re-entry of a fixed-lease lock', () => {
  it('moves the local lease with the lease in Redis: still held past the first lease end', async () => {
    const key = uniqueKey('reenter');
    const outer = await engine.acquire(key, { waitMs: 0, leaseMs: 1_500 });
    await sleep(700);
    const inner = await engine.runInLock(outer, () => engine.acquire(key, { leaseMs: 1_500 }));
    expect(inner.fencingToken).toBe(outer.fencingToken);
    // Past the first lease's end; the re-entry moved the lease in Redis to ~2.2 s.
    await sleep(1_000);
    expect(await env.admin.pttl(keys.names(key).lock)).toBeGreaterThan(0);
    expect(outer.signal.aborted).toBe(false);
    expect(outer.isHeld).toBe(true);
    expect(await inner.release()).toBe(true);
    expect(await outer.release()).toBe(true);
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  });
});

describe('renewal settings that cannot work', () => {
  it('refuses a renewEveryMs that leaves a renewal no time before the local lease end, before connecting', () => {
    expect(() => env.engine({ watchdogLeaseMs: 1_000, renewEveryMs: 950 })).toThrow(
      /renewEveryMs \(950\) leaves a renewal 38 ms to come back before a watchdog lease of 1000 ms ends \(drift allowance 12 ms\); at least 100 ms are needed/,
    );
    expect(() => env.engine({ watchdogLeaseMs: 1_000, renewEveryMs: 880 })).not.toThrow();
  });
});
