/**
 * Scenario 5: the lock's Redis restarts without persistence while a lock is held, so the lock
 * silently disappears and a second holder can take it at once. The first holder must learn of
 * the loss through its signal; the window in which both believe they hold the lock is measured
 * (not bounded: it is the price of a non-persistent Redis). Fencing still protects the storage:
 * the fence counter restarts from the server clock (µs), so the new token is still larger.
 */
import { LockRedisError } from '../../lib/core';
import { epochMs, round1 } from '../support/clock';
import {
  expectCleanRedis,
  faultEngine,
  lockKeyOf,
  RENEW_EVERY_MS,
  WATCHDOG_LEASE_MS,
} from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { keySnapshot } from '../support/lock-env';
import { faultFigures } from '../support/fault-figures';
import { startHolder } from '../support/holders';
import { sleep } from '../support/wait';
import type { LockEngine, LockHandle } from '../../lib/core';

const env = useFaultEnv();
const figures = faultFigures();

/** Acquires, retrying while Redis is unreachable (a waiting acquire fails fast on a Redis error by design). */
async function acquireThroughOutage(
  engine: LockEngine,
  key: string,
): Promise<{ lock: LockHandle; redisErrors: number }> {
  let redisErrors = 0;
  for (;;) {
    try {
      return { lock: await engine.acquire(key, { waitMs: 30_000 }), redisErrors };
    } catch (err) {
      if (!(err instanceof LockRedisError)) throw err;
      redisErrors++;
      await sleep(20);
    }
  }
}

describe('scenario 5: Redis restarted without persistence while a lock is held', () => {
  it.each([
    [`watchdog lease ${WATCHDOG_LEASE_MS} ms, renewed every ${RENEW_EVERY_MS} ms`, undefined],
    ['fixed lease 1500 ms', 1500],
  ])('tells the holder through its signal and keeps tokens increasing (%s)', async (label, leaseMs) => {
    const key = `restart:${leaseMs ?? 'wd'}`;
    const holder = await startHolder(env.redis.url, env.storeServer.url);
    const engine = faultEngine(env.redis.url);
    try {
      holder.send({ type: 'acquire', id: key, key, options: { leaseMs } });
      const first = await holder.next('granted', key);
      holder.send({ type: 'write', id: key, resource: key });
      expect((await holder.next('written', key)).accepted).toBe(true);
      expect(await env.admin.exists(lockKeyOf(key))).toBe(1);

      const contender = acquireThroughOutage(engine, key);
      const restartedAt = epochMs();
      await env.redis.restart();
      const { lock: second, redisErrors } = await contender;
      const secondAt = epochMs();
      expect(second.fencingToken).toBeGreaterThan(first.token);
      expect((await env.store.write(key, second.fencingToken, 'second')).accepted).toBe(true);

      const lost = await holder.next('lost', key);
      // Told by the check when its connection came back ('reset', or 'taken-over' once the second grant is
      // there); a watchdog holder may learn first from a renewal that failed or found the key gone.
      const told = leaseMs ? ['reset', 'taken-over'] : ['reset', 'taken-over', 'renewal-failed', 'deleted'];
      expect(told).toContain(lost.reason);
      holder.send({ type: 'write', id: key, resource: key });
      expect((await holder.next('written', key)).accepted).toBe(false);
      const secondLock = await keySnapshot(env.admin, lockKeyOf(key));
      holder.send({ type: 'release', id: key });
      expect((await holder.next('released', key)).result).toBe(false);
      expect(await keySnapshot(env.admin, lockKeyOf(key))).toEqual(secondLock);
      expect(second.signal.aborted).toBe(false);
      expect(await second.release()).toBe(true);
      expect(holder.unhandled()).toEqual([]);
      await expectCleanRedis(env.admin);

      figures.record(`5-redis-restart-${leaseMs ? 'fixed' : 'watchdog'}`, {
        title: `Redis restarted without persistence while held (${label})`,
        secondGrantAfterRestartMs: round1(secondAt - restartedAt),
        firstHolderToldAfterRestartMs: round1(lost.at - restartedAt),
        doubleHolderWindowMs: round1(Math.max(0, lost.at - secondAt)),
        lostReason: lost.reason,
        contenderRedisErrors: redisErrors,
        tokenIncreased: second.fencingToken > first.token,
        staleWriteRejected: true,
      });
    } finally {
      await engine.close();
      await holder.stop();
    }
  });
});
