/*
 * Read-write lock (`mode: 'read' | 'write'`) in one process against a real Redis: per-holder leases,
 * the watchdog, writer preference, pub/sub wake-ups and foreign data at the lock's keys.
 */
import { LockLostError, LockWrongTypeError } from '../../lib/core/errors';
import { keysWithoutTtl } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { FAMILY_ENV, lockNames, PREFIX } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const READ = { mode: 'read' } as const;
const WRITE = { mode: 'write' } as const;

describe('read-write lock: leases', () => {
  it('gives each holder its own lease: an expired reader goes while another reader stays', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-own-lease');
    const names = lockNames(key, 'rw');
    const short = await engine.acquire(key, { ...READ, leaseMs: 300 });
    const long = await engine.acquire(key, READ); // watchdog lease (30 s)
    expect(await whenAborted(short.signal)).toMatchObject({ name: 'LockLostError', reason: 'expired' });
    // Any access prunes by server time; probe with a reader until the short lease is gone there too.
    await waitUntil(
      async () => {
        const probe = await engine.tryAcquire(key, READ);
        await probe?.release();
        return (await env.admin.zcard(names.aux)) === 1;
      },
      { description: 'the expired reader to be pruned' },
    );
    expect(long.isHeld).toBe(true);
    expect(await short.release()).toBe(false);
    expect(await engine.tryAcquire(key, WRITE)).toBeNull(); // the live reader still counts
    await long.release();
    const w = await engine.tryAcquire(key, WRITE);
    expect(w).not.toBeNull();
    await w!.release();
  });

  it('keeps watchdog-leased readers and writers alive past several leases', async () => {
    const engine = env.engine({ watchdogLeaseMs: 1_000, renewEveryMs: 200 });
    const key = uniqueKey('rw-watchdog');
    const names = lockNames(key, 'rw');
    const r = await engine.acquire(key, READ);
    let renewals = 0;
    engine.events.on('renewed', (round) => (renewals += round.renewed));
    // 16 renewals, one per 200 ms: the reader outlives three of its 1 s leases.
    await waitUntil(() => renewals >= 16, { timeoutMs: 30_000, description: 'sixteen renewals' });
    expect(r.signal.aborted).toBe(false);
    expect(await env.admin.zcard(names.aux)).toBe(1);
    const pttl = await env.admin.pttl(names.aux);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(1_000);
    await r.release();
    const w = await engine.acquire(key, WRITE);
    renewals = 0;
    await waitUntil(() => renewals >= 5, { description: 'five renewals of the writer' });
    expect(w.signal.aborted).toBe(false);
    await w.extend(5_000);
    expect(await env.admin.pttl(names.lock)).toBeGreaterThan(1_000);
    await w.release();
  });

  it('aborts a holder whose entry was deleted, with reason "deleted"', async () => {
    const engine = env.engine({ watchdogLeaseMs: 1_000, renewEveryMs: 200 });
    const key = uniqueKey('rw-deleted');
    const r = await engine.acquire(key, READ);
    await env.admin.del(lockNames(key, 'rw').aux, lockNames(key, 'rw').lock);
    const reason = await whenAborted(r.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('deleted');
    expect(await r.release()).toBe(false);
  });

  it('keeps a TTL on every key it writes, including the writer-waiting marker', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-ttl');
    const r = await engine.acquire(key, READ);
    const waiting = engine.acquire(key, { ...WRITE, waitMs: 30_000 });
    await waitUntil(async () => (await env.admin.hget(lockNames(key, 'rw').lock, 'ww')) !== null);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
    await r.release();
    await (await waiting).release();
    expect(await env.admin.keys(`${PREFIX}{${key}}:rw*`)).toEqual([]);
  });
});

describe('read-write lock: writer preference and wake-ups', () => {
  it('makes new readers wait behind a waiting writer, while held readers still re-enter', async () => {
    const engine = env.engine();
    const other = env.engine();
    const key = uniqueKey('rw-prefer');
    const order: string[] = [];
    const r1 = await engine.acquire(key, READ);
    const writer = other.acquire(key, { ...WRITE, waitMs: 30_000 }).then(async (w) => {
      order.push('writer');
      await w.release();
    });
    await waitUntil(async () => (await env.admin.hget(lockNames(key, 'rw').lock, 'ww')) !== null, {
      description: 'the writer-waiting marker',
    });
    expect(await other.tryAcquire(key, READ)).toBeNull(); // a new reader yields to the writer
    const lateReader = other.acquire(key, { ...READ, waitMs: 30_000 }).then(async (r) => {
      order.push('late reader');
      await r.release();
    });
    await engine.runInLock(r1, async () => {
      const nested = await engine.acquire(key, { ...READ, waitMs: 0 }); // re-entry ignores the marker
      await nested.release();
    });
    await r1.release();
    await Promise.all([writer, lateReader]);
    expect(order).toEqual(['writer', 'late reader']);
  });

  it('lets readers in at once when the waiting writer gives up', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-writer-gives-up');
    const r1 = await engine.acquire(key, READ);
    const controller = new AbortController();
    const writer = engine.acquire(key, { ...WRITE, signal: controller.signal, waitMs: 30_000 });
    await waitUntil(async () => (await env.admin.hget(lockNames(key, 'rw').lock, 'ww')) !== null);
    controller.abort(new Error('caller gave up'));
    await expect(writer).rejects.toThrow('caller gave up');
    // Same connection as the engine: the marker's removal was sent before this attempt.
    const r2 = await engine.tryAcquire(key, READ);
    expect(r2).not.toBeNull();
    expect(await env.admin.hget(lockNames(key, 'rw').lock, 'ww')).toBeNull();
    // A writer trying once also leaves no marker behind.
    expect(await engine.tryAcquire(key, WRITE)).toBeNull();
    const r3 = await engine.tryAcquire(key, READ);
    expect(r3).not.toBeNull();
    await Promise.all([r1.release(), r2!.release(), r3!.release()]);
  });

  it('wakes waiting readers and writers of another connection by pub/sub, not by polling', async () => {
    // Backoff far longer than the waits: only a wake-up can get the waiters in before waitMs runs out.
    const waiterEngine = env.engine({
      backoff: { initialMs: 60_000, maxMs: 60_000 },
      defaults: { waitMs: 20_000 },
    });
    const holder = env.engine();
    const key = uniqueKey('rw-wakeup');
    const w = await holder.acquire(key, WRITE);
    const readers = [1, 2, 3].map(() => waiterEngine.acquire(key, READ));
    await waitUntil(() => waiterEngine.stats().channels === 1, { description: 'the waiters to subscribe' });
    await w.release();
    const held = await Promise.all(readers);
    expect(held.every((h) => h.isHeld)).toBe(true);
    const writer = waiterEngine.acquire(key, WRITE);
    await waitUntil(async () => (await env.admin.hget(lockNames(key, 'rw').lock, 'ww')) !== null);
    for (const h of held) await h.release();
    expect((await writer).isHeld).toBe(true);
  });

  it('reports foreign data at the lock key as LockWrongTypeError and leaves it untouched', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-wrongtype');
    const names = lockNames(key, 'rw');
    await env.admin.lpush(names.aux, 'app-data');
    await expect(engine.acquire(key, READ)).rejects.toBeInstanceOf(LockWrongTypeError);
    expect(await env.admin.lrange(names.aux, 0, -1)).toEqual(['app-data']);
    await env.admin.del(names.aux);
    await env.admin.hset(names.lock, 'app', 'data'); // a hash without TTL is not ours either
    await expect(engine.acquire(key, WRITE)).rejects.toBeInstanceOf(LockWrongTypeError);
    expect(await env.admin.hgetall(names.lock)).toEqual({ app: 'data' });
    await env.admin.del(names.lock);
  });
});
