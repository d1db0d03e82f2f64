/**
 * Scenario 17: Redis down at start-up, Redis killed while locks are held, and close() while a
 * caller waits. Each must end in a typed error or a clean result — never a hang, an unhandled
 * rejection or a leftover timer or socket.
 */
import { LockError, LockLostError, LockNotAcquiredError, LockRedisError } from '../../lib/core';
import { epochMs, round1 } from '../support/clock';
import {
  aborted,
  activeResources,
  expectCleanRedis,
  faultEngine,
  leakedResources,
  lockKeyOf,
} from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { getFreePort } from '../support/free-port';
import { closeClient, redisClient } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';

const env = useFaultEnv();
const figures = faultFigures();

/** Settles a call into its error (or undefined) and how long it took. */
async function settle(call: () => Promise<unknown>): Promise<{ error: unknown; value: unknown; ms: number }> {
  const started = epochMs();
  try {
    const value = await call();
    return { error: undefined, value, ms: round1(epochMs() - started) };
  } catch (error) {
    return { error, value: undefined, ms: round1(epochMs() - started) };
  }
}

describe('scenario 17: Redis down, killed, and close() mid-wait', () => {
  it('fails acquire, tryAcquire and using with LockRedisError when Redis is down at start-up, and closes cleanly', async () => {
    const consoleErrors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const baseline = activeResources();
    const port = await getFreePort();
    const engine = faultEngine(`redis://127.0.0.1:${port}`, { commandTimeoutMs: 500 });
    let ran = false;
    try {
      const acquire = await settle(() => engine.acquire('down:a'));
      const tryAcquire = await settle(() => engine.tryAcquire('down:b'));
      const using = await settle(() => engine.using('down:c', {}, async () => (ran = true)));
      expect(acquire.error).toBeInstanceOf(LockRedisError);
      expect(tryAcquire.error).toBeInstanceOf(LockRedisError);
      expect(using.error).toBeInstanceOf(LockRedisError);
      expect(ran).toBe(false);
      const closed = await settle(() => engine.close());
      expect(closed.error).toBeUndefined();
      const leaked = await leakedResources(baseline);
      expect(leaked).toEqual({});
      const ioredisNoise = consoleErrors.mock.calls.filter((c) =>
        String(c[0]).includes('[ioredis] Unhandled error event'),
      ).length;
      figures.record('17-redis-down-at-start', {
        title: 'Redis down at start-up (nothing listening; command timeout 500 ms)',
        errors: {
          acquire: (acquire.error as Error).name,
          tryAcquire: (tryAcquire.error as Error).name,
          using: (using.error as Error).name,
        },
        settleMs: { acquire: acquire.ms, tryAcquire: tryAcquire.ms, using: using.ms, close: closed.ms },
        leakedHandles: leaked,
        ioredisUnhandledErrorLogLines: ioredisNoise,
      });
    } finally {
      consoleErrors.mockRestore();
      await engine.close();
    }
  });

  it('signals both held locks, answers releases with false and fails new acquires when Redis is killed', async () => {
    const consoleErrors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    // The admin client would count its own reconnect timer as a leak: it goes, and comes back after.
    await closeClient(env.admin);
    const baseline = activeResources();
    const engine = faultEngine(env.redis.url, {
      watchdogLeaseMs: 1000,
      renewEveryMs: 300,
      commandTimeoutMs: 500,
    });
    try {
      const watchdog = await engine.acquire('killed:watchdog');
      const fixed = await engine.acquire('killed:fixed', { leaseMs: 1000 });
      const killedAt = epochMs();
      env.redis.kill('SIGKILL');
      await env.redis.exited;
      const [watchdogReason, fixedReason] = await Promise.all([
        aborted(watchdog.signal),
        aborted(fixed.signal),
      ]);
      const toldMs = round1(epochMs() - killedAt);
      expect(watchdogReason).toBeInstanceOf(LockLostError);
      expect(['renewal-failed', 'deleted']).toContain((watchdogReason as LockLostError).reason);
      expect(fixedReason).toMatchObject({ name: 'LockLostError', reason: 'expired' });
      const releases = await Promise.all([settle(() => watchdog.release()), settle(() => fixed.release())]);
      expect(releases.map((r) => [r.error, r.value])).toEqual([
        [undefined, false],
        [undefined, false],
      ]);
      const again = await settle(() => engine.acquire('killed:watchdog', { waitMs: 1000 }));
      expect(again.error).toBeInstanceOf(LockRedisError);
      const closed = await settle(() => engine.close());
      expect(closed.error).toBeUndefined();
      const leaked = await leakedResources(baseline);
      expect(leaked).toEqual({});
      figures.record('17-redis-killed-mid-hold', {
        title: 'Redis SIGKILLed while a watchdog lock and a fixed-lease lock (1000 ms) are held',
        watchdogLossReason: (watchdogReason as LockLostError).reason,
        bothSignalledAfterKillMs: toldMs,
        releaseResults: releases.map((r) => r.value),
        newAcquire: (again.error as Error).name,
        closeMs: closed.ms,
        leakedHandles: leaked,
      });
    } finally {
      consoleErrors.mockRestore();
      await engine.close();
      await env.redis.restart();
      env.admin = redisClient(env.redis.url, { maxRetriesPerRequest: 20 });
    }
  });

  it('fails a waiter with LockNotAcquiredError, releases held locks and leaves nothing behind when closed mid-wait', async () => {
    const baseline = activeResources();
    const other = faultEngine(env.redis.url);
    const engine = faultEngine(env.redis.url);
    try {
      const busy = await other.acquire('close:busy', { leaseMs: 60_000 });
      const mine = await engine.acquire('close:mine');
      const waiting = settle(() => engine.acquire('close:busy', { waitMs: 60_000 }));
      await waitUntil(() => engine.stats().waitingLocks === 1 && engine.stats().channels === 1, {
        description: 'the waiter to subscribe',
      });
      const closed = await settle(() => engine.close());
      const waiter = await waiting;
      expect(closed.error).toBeUndefined();
      expect(waiter.error).toBeInstanceOf(LockNotAcquiredError);
      expect(mine.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'closed' });
      expect(await env.admin.exists(lockKeyOf('close:mine'))).toBe(0);
      expect(await mine.release()).toBe(false);
      await expect(engine.acquire('close:other')).rejects.toBeInstanceOf(LockError);
      expect(engine.stats()).toEqual({ held: 0, watchdog: 0, waitingLocks: 0, channels: 0, closed: true });
      expect(await busy.release()).toBe(true);
      await other.close();
      const leaked = await leakedResources(baseline);
      expect(leaked).toEqual({});
      await expectCleanRedis(env.admin);
      figures.record('17-close-mid-wait', {
        title: 'close() while one lock is held and a caller waits for another',
        waiterError: (waiter.error as Error).name,
        waiterSettledMs: waiter.ms,
        closeMs: closed.ms,
        heldLockReleasedInRedis: true,
        leakedHandles: leaked,
      });
    } finally {
      await Promise.all([engine.close(), other.close()]);
    }
  });
});
