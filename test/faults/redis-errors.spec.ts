/**
 * The Redis-side rows of the bad-input table: a replica (READONLY), a master that cannot persist
 * (MISCONF) and a connection the user closed. Each is a LockRedisError that keeps Redis' own
 * message as its cause: never "busy", never "lost", never an unhandled rejection, and a release
 * in a finally still resolves instead of throwing. (NOSCRIPT is covered by script-flush.spec.ts.)
 */
import Redis from 'ioredis';
import { LockRedisError } from '../../lib/core';
import { expectCleanRedis, faultEngine, lockKeyOf } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis } from '../support/redis-server';
import { waitUntil } from '../support/wait';

// CONFIG SET dir is a protected setting since Redis 7; this server allows it from loopback.
const env = useFaultEnv({ args: ['--enable-protected-configs', 'local'] });
const figures = faultFigures();

/** Settles a promise into its error (undefined when it resolved). */
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

function expectRedisError(error: unknown, pattern: RegExp): string {
  expect(error).toBeInstanceOf(LockRedisError);
  const cause = (error as LockRedisError).cause as Error;
  expect(String(cause?.message)).toMatch(pattern);
  return String(cause.message).split(' ')[0]!;
}

describe('Redis errors from the bad-input table', () => {
  it('refuses to lock on a read-only replica with LockRedisError (READONLY) and writes nothing', async () => {
    const replica = await startRedis({ args: ['--replicaof', env.redis.host, String(env.redis.port)] });
    const replicaAdmin = redisClient(replica.url);
    const engine = faultEngine(replica.url);
    try {
      const acquire = await errorOf(engine.acquire('ro:a'));
      const tryAcquire = await errorOf(engine.tryAcquire('ro:b', { reentrant: false }));
      const code = expectRedisError(acquire, /^READONLY/);
      expectRedisError(tryAcquire, /^READONLY/);
      expect(await replicaAdmin.dbsize()).toBe(0);
      expect(await env.admin.exists(lockKeyOf('ro:a'), lockKeyOf('ro:b'))).toBe(0);
      figures.record('bad-input-readonly', {
        title: 'Lock against a read-only replica',
        error: 'LockRedisError',
        cause: code,
      });
    } finally {
      await engine.close();
      await closeClient(replicaAdmin);
      await replica.stop();
    }
  });

  it('refuses to lock with LockRedisError (MISCONF) while the master cannot persist, and recovers after', async () => {
    const engine = faultEngine(env.redis.url);
    const dir = String((await env.admin.config('GET', 'dir'))[1]);
    try {
      const held = await engine.acquire('misconf:held', { leaseMs: 30_000 });
      await env.admin.config('SET', 'save', '3600 1');
      await env.admin.config('SET', 'dir', '/proc'); // nobody, not even root, can create a file there
      await env.admin.bgsave();
      await waitUntil(async () => /rdb_last_bgsave_status:err/.test(await env.admin.info('persistence')), {
        description: 'the background save to fail',
      });
      const acquire = await errorOf(engine.acquire('misconf:a'));
      const tryAcquire = await errorOf(engine.tryAcquire('misconf:b'));
      const code = expectRedisError(acquire, /^MISCONF/);
      expectRedisError(tryAcquire, /^MISCONF/);
      // A release in a finally must not throw either: it reports false and the lease bounds the lock.
      const release = held.release();
      await expect(release).resolves.toBe(false);
      expect(await env.admin.exists(lockKeyOf('misconf:held'))).toBe(1);

      await env.admin.config('SET', 'dir', dir);
      await env.admin.config('SET', 'save', '');
      await env.admin.config('SET', 'stop-writes-on-bgsave-error', 'no');
      const after = await engine.acquire('misconf:a');
      expect(await after.release()).toBe(true);
      await env.admin.del(lockKeyOf('misconf:held'));
      await expectCleanRedis(env.admin);
      figures.record('bad-input-misconf', {
        title: 'Lock while the master cannot persist (stop-writes-on-bgsave-error)',
        error: 'LockRedisError',
        cause: code,
        releaseDuringMisconf: false,
      });
    } finally {
      await env.admin.config('SET', 'dir', dir);
      await env.admin.config('SET', 'stop-writes-on-bgsave-error', 'yes');
      await engine.close();
    }
  });

  it('answers with LockRedisError, never an unhandled rejection, when the user closed the client passed in', async () => {
    const client = new Redis(env.redis.url, { maxRetriesPerRequest: 1 });
    const engine = faultEngine(client);
    try {
      const held = await engine.acquire('closed:held', { leaseMs: 2000 });
      await client.quit();
      const acquire = await errorOf(engine.acquire('closed:a'));
      const tryAcquire = await errorOf(engine.tryAcquire('closed:b'));
      const extend = await errorOf(held.extend());
      const code = expectRedisError(acquire, /closed/i);
      expectRedisError(tryAcquire, /closed/i);
      expect(extend).toBeInstanceOf(LockRedisError);
      await expect(held.release()).resolves.toBe(false);
      await expect(engine.close()).resolves.toBeUndefined();
      expect(client.status).toBe('end');
      // The lease bounds what the closed client could not release.
      await waitUntil(async () => (await env.admin.exists(lockKeyOf('closed:held'))) === 0, {
        description: 'the lease to end',
      });
      await expectCleanRedis(env.admin);
      figures.record('bad-input-connection-closed', {
        title: 'The ioredis client passed in was closed by its owner',
        error: 'LockRedisError',
        cause: code,
        releaseResult: false,
      });
    } finally {
      await engine.close();
      client.disconnect();
    }
  });
});
