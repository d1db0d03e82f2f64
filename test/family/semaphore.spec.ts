/*
 * Counting semaphore (`limit: n`) in one process against a real Redis: at most n holders, permits
 * with their own leases that come back when they expire, reentrant permits, owner-checked release.
 */
import { LockLostError, LockWrongTypeError } from '../../lib/core/errors';
import { keysWithoutTtl } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { FAMILY_ENV, lockNames, PREFIX } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const permits = (key: string): Promise<number> => env.admin.zcard(lockNames(key, 'sem').aux);

describe('counting semaphore', () => {
  it('grants at most `limit` permits and a released permit goes to a waiter', async () => {
    const engine = env.engine();
    const key = uniqueKey('sem-limit');
    const held = await Promise.all([1, 2, 3].map(() => engine.acquire(key, { limit: 3 })));
    expect(await permits(key)).toBe(3);
    expect(await engine.tryAcquire(key, { limit: 3 })).toBeNull();
    const waiter = engine.acquire(key, { limit: 3, waitMs: 20_000 });
    await held[1]!.release();
    const fourth = await waiter;
    expect(fourth.isHeld).toBe(true);
    expect(await permits(key)).toBe(3);
    for (const h of [held[0]!, held[2]!, fourth]) await h.release();
    expect(await env.admin.exists(lockNames(key, 'sem').lock, lockNames(key, 'sem').aux)).toBe(0);
  });

  it('wakes waiters of another connection by pub/sub when a permit comes back', async () => {
    const waiters = env.engine({
      backoff: { initialMs: 60_000, maxMs: 60_000 },
      defaults: { waitMs: 20_000 },
    });
    const holder = env.engine();
    const key = uniqueKey('sem-wakeup');
    const held = await Promise.all([1, 2].map(() => holder.acquire(key, { limit: 2 })));
    const pending = [1, 2].map(() => waiters.acquire(key, { limit: 2 }));
    await waitUntil(() => waiters.stats().channels === 1, { description: 'the waiters to subscribe' });
    for (const h of held) await h.release();
    const got = await Promise.all(pending);
    expect(got.every((h) => h.isHeld)).toBe(true);
  });

  it('gives expired permits back: holders that never release stop counting after their lease', async () => {
    const engine = env.engine();
    const key = uniqueKey('sem-expiry');
    // 1 s: both permits must still be taken at the tryAcquire below on a loaded parallel run.
    const stale = await Promise.all([1, 2].map(() => engine.acquire(key, { limit: 2, leaseMs: 1_000 })));
    expect(await engine.tryAcquire(key, { limit: 2 })).toBeNull();
    const fresh = await Promise.all([1, 2].map(() => engine.acquire(key, { limit: 2, waitMs: 20_000 })));
    expect(fresh.every((h) => h.isHeld)).toBe(true);
    for (const s of stale) expect(await whenAborted(s.signal)).toMatchObject({ reason: 'expired' });
    expect(await permits(key)).toBe(2);
    // A stale holder's release is refused and leaves the new holders' permits alone.
    for (const s of stale) expect(await s.release()).toBe(false);
    expect(await permits(key)).toBe(2);
    const tokens = [...stale, ...fresh].map((h) => h.fencingToken);
    expect(Math.min(...fresh.map((h) => h.fencingToken))).toBeGreaterThan(
      Math.max(...stale.map((h) => h.fencingToken)),
    );
    expect(new Set(tokens).size).toBe(4);
  });

  it('re-enters on the permit it holds in the same async context instead of taking another', async () => {
    const engine = env.engine();
    const key = uniqueKey('sem-reenter');
    await engine.using(key, { limit: 1 }, async (outer) => {
      const inner = await engine.acquire(key, { limit: 1, waitMs: 0 });
      expect(inner.fencingToken).toBe(outer.fencingToken);
      expect(await permits(key)).toBe(1);
      expect(await inner.release()).toBe(true);
      expect(outer.isHeld).toBe(true);
    });
    expect(await permits(key)).toBe(0);
  });

  it('keeps a sibling context of the same process out when no permit is free', async () => {
    const engine = env.engine();
    const key = uniqueKey('sem-sibling');
    const h = await engine.acquire(key, { limit: 1 });
    expect(await engine.tryAcquire(key, { limit: 1 })).toBeNull();
    await h.release();
  });

  it('renews each permit with the watchdog and aborts a holder whose permit was removed', async () => {
    const engine = env.engine({ watchdogLeaseMs: 1_000, renewEveryMs: 200 });
    const key = uniqueKey('sem-watchdog');
    const names = lockNames(key, 'sem');
    const a = await engine.acquire(key, { limit: 2 });
    const b = await engine.acquire(key, { limit: 2 });
    let renewals = 0;
    engine.events.on('renewed', (round) => (renewals += round.renewed));
    await waitUntil(() => renewals >= 10, { description: 'ten renewals' });
    expect(a.signal.aborted || b.signal.aborted).toBe(false);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
    // Take one of the two permits away by hand: only its holder learns of the loss.
    const owner = await env.admin.zrandmember(names.aux);
    await env.admin.zrem(names.aux, owner!);
    const lost = await Promise.race([whenAborted(a.signal), whenAborted(b.signal)]);
    expect(lost).toBeInstanceOf(LockLostError);
    expect((lost as LockLostError).reason).toBe('deleted');
    const [gone, kept] = a.signal.aborted ? [a, b] : [b, a];
    expect(kept.signal.aborted).toBe(false);
    await expect(gone.extend(1_000)).rejects.toBeInstanceOf(LockLostError);
    await kept.extend(5_000);
    expect(await env.admin.zscore(names.aux, owner!)).toBeNull();
    expect(await env.admin.zcard(names.aux)).toBe(1);
    expect(await env.admin.pttl(names.aux)).toBeGreaterThan(1_000);
  });

  it('reports foreign data at the permits key as LockWrongTypeError and leaves it untouched', async () => {
    const engine = env.engine();
    const key = uniqueKey('sem-wrongtype');
    const names = lockNames(key, 'sem');
    await env.admin.sadd(names.aux, 'app-data');
    await expect(engine.acquire(key, { limit: 2 })).rejects.toBeInstanceOf(LockWrongTypeError);
    expect(await env.admin.smembers(names.aux)).toEqual(['app-data']);
    await env.admin.del(names.aux);
  });
});
