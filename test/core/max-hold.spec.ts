/*
 * maxHoldMs (ShedLock's lockAtMostFor) and a module-wide fixed lease (`defaults.leaseMs`), through the
 * public engine: a watchdog lock with maxHoldMs is renewed up to that point and no further, then its
 * holder is told (reason 'max-hold') and another process can take it; extend() cannot pass it. A
 * `defaults.leaseMs` turns the watchdog off for calls that name no lease of their own.
 */
import { LockLostError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { waitUntil } from '../support/wait';
import { nextEvent, uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';

const PREFIX = 'maxhold:';
const keys = new KeySpace(PREFIX);
const lockName = (key: string): string => keys.names(key, 'm').lock;
const env = useLockEnv();

describe('maxHoldMs', () => {
  it('renews a watchdog lock until maxHoldMs, then ends it: the signal aborts with "max-hold" and another engine takes it', async () => {
    // A 1 s watchdog lease renewed every 200 ms: without maxHoldMs the lock would live on. (The
    // exact timing is test/virtual-time/waiting.spec.ts'; here real Redis lets the key go. A 300 ms
    // lease lost the lock to an event-loop stall before its first renewal on a loaded CI machine.)
    const engine = env.engine({ keyPrefix: PREFIX, watchdogLeaseMs: 1_000, renewEveryMs: 200 });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('job');
    const lost = nextEvent(engine, 'lost', (e) => e.key === key);
    const renewed = nextEvent(engine, 'renewed', (e) => e.renewed > 0);
    const handle = await engine.acquire(key, { maxHoldMs: 2_500 });
    expect(engine.stats().watchdog).toBe(1);

    // The watchdog renewed it within its first lease; a lock that ended first says why at once.
    const first = await Promise.race([
      renewed.then(() => 'renewed'),
      whenAborted(handle.signal).then(
        (r) => `ended before its first renewal: ${(r as LockLostError).reason}`,
      ),
    ]);
    expect(first).toBe('renewed');
    expect(handle.signal.aborted).toBe(false);
    expect(await other.tryAcquire(key)).toBeNull();

    const reason = await whenAborted(handle.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('max-hold');
    expect(await lost).toMatchObject({ key, reason: 'max-hold' });
    expect(handle.isHeld).toBe(false);
    // Redis lets the key go by itself: the last renewal asked for no more than what maxHoldMs left.
    await waitUntil(async () => (await env.admin.exists(lockName(key))) === 0, {
      description: 'the key to expire at maxHoldMs',
    });
    const next = await other.acquire(key, { waitMs: 2_000 });
    expect(next.fencingToken).toBeGreaterThan(handle.fencingToken);
    expect(await handle.release()).toBe(false);
    await next.release();
    expect(engine.stats()).toMatchObject({ held: 0, watchdog: 0 });
  });

  it('caps extend() at maxHoldMs, and refuses it once maxHoldMs has passed', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('extend');
    const handle = await engine.acquire(key, { leaseMs: 500, maxHoldMs: 800 });
    await handle.extend(60_000);
    // Never past grant + 800 ms, however much was asked.
    expect(await env.admin.pttl(lockName(key))).toBeLessThanOrEqual(800);
    expect(handle.remainingMs()).toBeLessThanOrEqual(800);
    const reason = await whenAborted(handle.signal);
    expect((reason as LockLostError).reason).toBe('max-hold');
    await expect(handle.extend(1_000)).rejects.toBeInstanceOf(LockLostError);
  });

  it('is refused before any command when it is below minHoldMs or not a positive duration', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    await expect(engine.acquire(uniqueKey('bad'), { minHoldMs: 500, maxHoldMs: 400 })).rejects.toThrow(
      'minHoldMs (500) must not exceed maxHoldMs (400)',
    );
    await expect(engine.acquire(uniqueKey('bad'), { maxHoldMs: 0 })).rejects.toBeInstanceOf(RangeError);
    expect(engine.stats()).toMatchObject({ held: 0, waitingLocks: 0 });
  });
});

describe('defaults.leaseMs', () => {
  it('gives calls without their own lease a fixed one (no watchdog); a call with leaseMs keeps its own', async () => {
    const engine = env.engine({
      keyPrefix: PREFIX,
      defaults: { leaseMs: 400 },
      watchdogLeaseMs: 300,
      renewEveryMs: 100,
    });
    const key = uniqueKey('default-lease');
    const handle = await engine.acquire(key);
    expect(engine.stats().watchdog).toBe(0);
    expect(await env.admin.pttl(lockName(key))).toBeGreaterThan(300); // 400, not the 300 ms watchdog lease
    const reason = await whenAborted(handle.signal);
    expect((reason as LockLostError).reason).toBe('expired');
    await waitUntil(async () => (await env.admin.exists(lockName(key))) === 0, {
      description: 'the key to expire',
    });

    const own = await engine.acquire(uniqueKey('own-lease'), { leaseMs: 30_000 });
    expect(own.remainingMs()).toBeGreaterThan(10_000);
    expect(engine.stats().watchdog).toBe(0);
    await own.release();
  });
});
