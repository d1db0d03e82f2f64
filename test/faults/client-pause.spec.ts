/**
 * Scenario 7: CLIENT PAUSE WRITE holds every script call at the server. An acquire whose command
 * timed out is reported as a LockRedisError, but the command still runs when the pause ends and
 * may grant the lock to nobody. The engine must undo such a late grant (release it) instead of
 * leaving an orphan lock for the whole lease.
 */
import { LockRedisError } from '../../lib/core';
import { epochMs, round1 } from '../support/clock';
import { expectCleanRedis, faultEngine, lockKeyOf, PREFIX } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { waitUntil } from '../support/wait';
import { listClients } from '../support/redis-assertions';
import { KeySpace } from '../../lib/core/internal';

const env = useFaultEnv();
const figures = faultFigures();
const fenceOf = (key: string) => new KeySpace(PREFIX).names(key).fence;

afterEach(async () => {
  await env.admin.client('UNPAUSE');
});

/** Resolves once a script call of some client is held back by the pause. */
function scriptHeldByPause(): Promise<unknown> {
  return waitUntil(
    async () => (await listClients(env.admin)).some((c) => c.flags.includes('b') && /^eval/.test(c.cmd)),
    {
      description: 'a script call held by CLIENT PAUSE',
    },
  );
}

describe('scenario 7: CLIENT PAUSE during acquire', () => {
  it.each([
    ['reentrant mutex', true],
    ['token lock', false],
  ])('undoes the late grant of an acquire that timed out during the pause (%s)', async (label, reentrant) => {
    const key = `pause:${label}`;
    const engine = faultEngine(env.redis.url, { commandTimeoutMs: 300 });
    try {
      await env.admin.client('PAUSE', 60_000, 'WRITE');
      const attempt = engine.acquire(key, { waitMs: 0, leaseMs: 120_000, reentrant });
      await expect(attempt).rejects.toBeInstanceOf(LockRedisError);
      await scriptHeldByPause();
      const unpausedAt = epochMs();
      await env.admin.client('UNPAUSE');
      // The fence counter proves the late acquire did run and grant; the lock key must then go,
      // long before its 120 s lease could have ended it.
      await waitUntil(
        async () =>
          (await env.admin.exists(fenceOf(key))) === 1 && (await env.admin.exists(lockKeyOf(key))) === 0,
        {
          intervalMs: 2,
          timeoutMs: 20_000,
          description: 'the late grant to be undone',
        },
      );
      const orphanMs = round1(epochMs() - unpausedAt);
      await expectCleanRedis(env.admin);
      figures.record(`7-client-pause-late-grant-${reentrant ? 'mutex' : 'token'}`, {
        title: `CLIENT PAUSE WRITE during acquire (${label}, command timeout 300 ms, lease 120 s)`,
        acquireOutcome: 'LockRedisError',
        lateGrantUndone: true,
        orphanLivedAfterUnpauseMs: orphanMs,
      });
    } finally {
      await engine.close();
    }
  });

  it('fails a waiting acquire with LockRedisError when its attempt times out during the pause', async () => {
    const key = 'pause:waiter';
    const owner = faultEngine(env.redis.url);
    const engine = faultEngine(env.redis.url, { commandTimeoutMs: 300 });
    try {
      const held = await owner.acquire(key, { leaseMs: 60_000 });
      const waiting = engine.acquire(key, { waitMs: 20_000 });
      await waitUntil(() => engine.stats().waitingLocks === 1, { description: 'the waiter to queue' });
      await env.admin.client('PAUSE', 60_000, 'WRITE');
      await expect(waiting).rejects.toBeInstanceOf(LockRedisError);
      await env.admin.client('UNPAUSE');
      expect(engine.stats()).toMatchObject({ waitingLocks: 0, held: 0 });
      expect(await held.release()).toBe(true);
      await expectCleanRedis(env.admin);
    } finally {
      await engine.close();
      await owner.close();
    }
  });
});
