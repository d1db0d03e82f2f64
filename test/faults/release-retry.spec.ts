/**
 * A release that fails on a Redis error (here: Redis frozen longer than the command timeout) must
 * not leave the lock to sit out its whole lease: the engine keeps retrying it in the background,
 * owner-checked, until the lease would have ended anyway.
 */
import { KeySpace } from '../../lib/core/internal';
import { faultEngine, PREFIX } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { waitUntil } from '../support/wait';

const env = useFaultEnv();

afterEach(() => {
  if (env.redis?.paused) env.redis.resume();
});

describe('release retried in the background after a Redis error', () => {
  it('frees the lock once Redis answers again, long before the lease ends', async () => {
    const engine = faultEngine(env.redis.url, { commandTimeoutMs: 300 });
    const released: string[] = [];
    engine.events.on('released', (e) => released.push(e.result));
    try {
      const lock = await engine.acquire('retry-me', { leaseMs: 120_000 });
      const redisKey = new KeySpace(PREFIX).names('retry-me').lock;
      env.redis.pause();
      await expect(lock.release()).resolves.toBe(false); // timed out: reported, never thrown
      expect(released).toEqual(['failed']);
      env.redis.resume();
      await waitUntil(async () => (await env.admin.exists(redisKey)) === 0, {
        timeoutMs: 60_000,
        description: 'the background release',
      });
      // The retry reports `released`, or `not-held` when the timed-out command itself ran once
      // Redis thawed (ioredis had it queued); either way the lock is gone and nobody was told "lost".
      await waitUntil(() => released.length >= 2, { description: 'the retried release' });
      expect(['released', 'not-held']).toContain(released[1]);
      const next = await engine.tryAcquire('retry-me');
      expect(next).not.toBeNull();
      await next!.release();
    } finally {
      await engine.close();
    }
  });

  it('stops retrying at close()', async () => {
    const engine = faultEngine(env.redis.url, { commandTimeoutMs: 300 });
    const lock = await engine.acquire('retry-close', { leaseMs: 120_000 });
    env.redis.pause();
    await expect(lock.release()).resolves.toBe(false);
    await engine.close(); // must not leave a retry timer behind (--detectOpenHandles)
    env.redis.resume();
    expect(engine.stats().held).toBe(0);
  });
});
