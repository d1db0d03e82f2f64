/**
 * Scenario 6: the lock's Redis is frozen (SIGSTOP): it keeps its sockets open but answers
 * nothing. Every call must settle — with success or a typed error — on its own, bounded by the
 * command timeout, not when Redis comes back. A freeze longer than the lease must reach the
 * holder as a lost-lock signal while Redis is still frozen; a shorter one must not.
 */
import { LockError, LockLostError, LockRedisError } from '../../lib/core';
import { epochMs, round1 } from '../support/clock';
import { aborted, expectCleanRedis, faultEngine } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { sleep } from '../support/wait';

const env = useFaultEnv();
const figures = faultFigures();

/** Runs `call`, recording when it settled and how (a value, or an error class name). */
async function timed(name: string, call: () => Promise<unknown>) {
  const started = epochMs();
  try {
    const value = await call();
    return { name, ok: true as const, value, error: undefined, ms: round1(epochMs() - started) };
  } catch (error) {
    return {
      name,
      ok: false as const,
      value: undefined,
      error: error as Error,
      ms: round1(epochMs() - started),
    };
  }
}

afterEach(() => {
  if (env.redis?.paused) env.redis.resume();
});

describe('scenario 6: Redis frozen with SIGSTOP', () => {
  it('settles every call and loses nothing when the freeze is shorter than the lease', async () => {
    const engine = faultEngine(env.redis.url, {
      watchdogLeaseMs: 3000,
      renewEveryMs: 500,
      commandTimeoutMs: 2500,
    });
    try {
      const held = await engine.acquire('freeze:short:held');
      const toRelease = await engine.acquire('freeze:short:release', { leaseMs: 5000 });
      env.redis.pause();
      const calls = Promise.all([
        timed('tryAcquire', () => engine.tryAcquire('freeze:short:a')),
        timed('acquire', () => engine.acquire('freeze:short:b', { waitMs: 0 })),
        timed('extend', () => held.extend()),
        timed('release', () => toRelease.release()),
      ]);
      await sleep(400);
      env.redis.resume();
      const results = await calls;
      for (const r of results) {
        expect(r.ok || r.error instanceof LockError).toBe(true);
      }
      // Consistency whatever the timing: a lock is either held with a live signal, or lost and told.
      expect(held.isHeld).toBe(!held.signal.aborted);
      const heldSurvived = held.isHeld;
      for (const r of results) {
        const value = r.value as { release?: () => Promise<boolean> } | null | undefined;
        if (value?.release) await value.release();
      }
      await held.release();
      await expectCleanRedis(env.admin);
      figures.record('6-redis-sigstop-shorter-than-lease', {
        title: 'Redis SIGSTOPped 400 ms (lease 3000 ms, command timeout 2500 ms)',
        calls: Object.fromEntries(results.map((r) => [r.name, r.ok ? 'ok' : r.error!.name])),
        settleMs: Object.fromEntries(results.map((r) => [r.name, r.ms])),
        heldLockSurvived: heldSurvived,
      });
    } finally {
      await engine.close();
    }
  });

  it('settles every call while Redis is still frozen and signals the loss when the freeze outlasts the lease', async () => {
    const engine = faultEngine(env.redis.url, {
      watchdogLeaseMs: 1000,
      renewEveryMs: 300,
      commandTimeoutMs: 300,
    });
    const elsewhere = faultEngine(env.redis.url, { commandTimeoutMs: 300 });
    try {
      const watchdogLock = await engine.acquire('freeze:long:watchdog');
      const fixedLock = await engine.acquire('freeze:long:fixed', { leaseMs: 800 });
      // Held by another process (engine): a waiter of the holder's own process would wait for it
      // locally (cohorts) without asking the frozen Redis at all.
      const busy = await elsewhere.acquire('freeze:long:busy', { leaseMs: 60_000 });
      const frozenAt = epochMs();
      env.redis.pause();
      const results = await Promise.all([
        timed('tryAcquire', () => engine.tryAcquire('freeze:long:a')),
        timed('acquire', () => engine.acquire('freeze:long:b', { waitMs: 2000 })),
        timed('acquireBusy', () => engine.acquire('freeze:long:busy', { waitMs: 2000 })),
        timed('extend', () => watchdogLock.extend()),
        timed('release', () => fixedLock.release()),
        timed('watchdogSignal', () => aborted(watchdogLock.signal)),
      ]);
      // Everything above settled while the server was still frozen.
      const settledMs = round1(epochMs() - frozenAt);
      expect(env.redis.paused).toBe(true);
      const byName = Object.fromEntries(results.map((r) => [r.name, r]));
      expect(byName.tryAcquire!.error).toBeInstanceOf(LockRedisError);
      expect(byName.acquire!.error).toBeInstanceOf(LockRedisError);
      expect(byName.acquireBusy!.error).toBeInstanceOf(LockRedisError);
      expect(byName.extend!.error).toBeInstanceOf(LockRedisError);
      expect(byName.release).toMatchObject({ ok: true, value: false });
      const reason = byName.watchdogSignal!.value as LockLostError;
      expect(reason).toBeInstanceOf(LockLostError);
      expect(['renewal-failed', 'expired']).toContain(reason.reason);
      expect(watchdogLock.isHeld).toBe(false);
      expect(busy.isHeld).toBe(true);
      // Keep Redis frozen until the watchdog lock's lease has run out there too.
      await sleep(Math.max(0, frozenAt + 1500 - epochMs()));
      const frozenForMs = round1(epochMs() - frozenAt);
      env.redis.resume();

      expect(await busy.release()).toBe(true);
      expect(await watchdogLock.release()).toBe(false);
      // Calls that timed out still reach Redis once it thaws: their late grants must be undone.
      await expectCleanRedis(env.admin);
      figures.record('6-redis-sigstop-longer-than-lease', {
        title: 'Redis SIGSTOPped past the lease (watchdog lease 1000 ms, command timeout 300 ms)',
        calls: Object.fromEntries(results.map((r) => [r.name, r.ok ? 'ok' : r.error!.name])),
        settleMs: Object.fromEntries(results.map((r) => [r.name, r.ms])),
        watchdogLossReason: reason.reason,
        watchdogLossToldAfterFreezeMs: byName.watchdogSignal!.ms,
        allSettledWhileFrozenMs: settledMs,
        frozenForMs,
      });
    } finally {
      env.redis.resume();
      await Promise.all([engine.close(), elsewhere.close()]);
    }
  });
});
