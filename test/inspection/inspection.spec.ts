/*
 * Inspection on one Redis, engines in this process: what inspect() and list() report for every
 * kind, how force release keeps fencing meaningful, bad input refused before any command, and
 * the registry leaving nothing behind.
 */
import { LockLostError, type LockEngine, type LockInfo } from '../../lib/core';
import { createInMemoryLockEngine } from '../../lib/testing';
import { keysWithoutTtl } from '../support/redis-assertions';
import { commandsDuring, uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const PREFIX = 'insp:';
const env = useLockEnv({ keyPrefix: PREFIX });

/** Resolves with list()'s entry for `key` once the registry shows it with `predicate` true. */
async function listed(
  engine: LockEngine,
  key: string,
  predicate: (info: LockInfo) => boolean = () => true,
): Promise<LockInfo> {
  return waitUntil(
    async () => (await engine.list({ match: key })).locks.find((l) => l.key === key && predicate(l)),
    { description: `list() to show ${key}` },
  );
}

describe('inspect() and list()', () => {
  it('report every kind with owner, times, token, hold count and waiters', async () => {
    const a = env.engine({ app: 'billing' });
    const b = env.engine({ app: 'reports' });
    const base = uniqueKey('kinds');
    const [mk, tk, rk, fk, sk] = ['mutex', 'token', 'rw', 'fair', 'sem'].map((k) => `${base}:${k}`);
    const before = Date.now();
    const mutex = await a.acquire(mk!);
    const nested = await a.runInLock(mutex, () => a.acquire(mk!));
    const token = await a.acquire(tk!, { reentrant: false });
    const read = await a.acquire(rk!, { mode: 'read' });
    const fair = await a.acquire(fk!, { fair: true });
    const permits = await a.acquire(sk!, { limit: 3, permits: 2 });
    const waiting = [
      b.acquire(mk!, { waitMs: 60_000 }),
      b.acquire(mk!, { waitMs: 60_000 }),
      b.acquire(fk!, { fair: true, waitMs: 60_000 }),
      b.acquire(rk!, { mode: 'write', waitMs: 60_000 }),
    ].map((p) => p.then((h) => h.release()));

    const m = await listed(b, mk!, (l) => l.waiters.total === 2);
    expect(m).toEqual({
      key: mk,
      kind: 'mutex',
      holders: [
        {
          owner: { engine: a.engineId, host: expect.any(String), pid: process.pid, app: 'billing' },
          acquiredAt: expect.any(Number),
          expiresAt: expect.any(Number),
          fencingToken: mutex.fencingToken,
          holdCount: 2,
        },
      ],
      waiters: { total: 2, byOwner: { [`reports@${m.holders[0]!.owner.host}#${process.pid}`]: 2 } },
    });
    expect(m.holders[0]!.acquiredAt).toBeGreaterThanOrEqual(before - 50);
    expect(m.holders[0]!.expiresAt).toBeGreaterThan(Date.now());
    expect(await b.inspect(tk!)).toMatchObject({
      kind: 'token',
      holders: [{ fencingToken: token.fencingToken, holdCount: 1 }],
    });
    expect(await listed(b, rk!, (l) => l.waiters.total === 1)).toMatchObject({
      kind: 'read-write',
      holders: [{ fencingToken: read.fencingToken, holdCount: 1, mode: 'read' }],
    });
    expect(await listed(b, fk!, (l) => l.waiters.total === 1)).toMatchObject({
      kind: 'fair',
      holders: [{ fencingToken: fair.fencingToken, holdCount: 1 }],
    });
    expect(await listed(b, sk!)).toMatchObject({
      kind: 'semaphore',
      holders: [{ fencingToken: permits.fencingToken, holdCount: 1, permits: 2 }],
    });
    const all = await b.list({ match: `${base}:*` });
    expect(all.locks.map((l) => [l.key, l.kind])).toEqual([
      [fk, 'fair'],
      [mk, 'mutex'],
      [rk, 'read-write'],
      [sk, 'semaphore'],
      [tk, 'token'],
    ]);
    expect((await b.list({ match: `${base}:*`, kind: 'semaphore' })).locks.map((l) => l.key)).toEqual([sk]);
    expect(await b.isLocked(mk!)).toBe(true);
    expect(await b.isLocked(mk!, { kind: 'token' })).toBe(false);
    expect(await b.inspect(`${base}:free`)).toBeNull();

    await Promise.all([nested.release(), mutex.release(), token.release(), read.release()]);
    await Promise.all([fair.release(), permits.release()]);
    expect(await Promise.all(waiting)).toEqual([true, true, true, true]);
    await waitUntil(async () => (await b.list({ match: `${base}:*` })).locks.length === 0, {
      description: 'the registry to forget the released locks',
    });
    expect(await b.isLocked(mk!)).toBe(false);
  });

  it('pages through list() with a cursor, in key order', async () => {
    const engine = env.engine();
    const base = uniqueKey('page');
    const keys = Array.from({ length: 7 }, (_, i) => `${base}:${i}`);
    const handles = await Promise.all(keys.map((k) => engine.acquire(k)));
    await waitUntil(async () => (await engine.list({ match: `${base}:*` })).locks.length === 7);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await engine.list({ match: `${base}:*`, limit: 3, ...(cursor && { cursor }) });
      seen.push(...page.locks.map((l) => l.key));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(keys);
    expect(pages).toBe(3);
    await Promise.all(handles.map((h) => h.release()));
  });
});

describe('forceRelease()', () => {
  it('aborts the holder with force-released, advances the fence, wakes a waiter and audits', async () => {
    const holder = env.engine({ app: 'worker' });
    const operator = env.engine({ app: 'ops-console' });
    const key = uniqueKey('evict');
    const lock = await holder.acquire(key);
    const waiter = operator.acquire(key, { waitMs: 60_000 });
    await listed(operator, key, (l) => l.waiters.total === 1);
    const events: unknown[] = [];
    operator.events.on('forceReleased', (e) => events.push(e));

    expect(await operator.forceRelease(key, { reason: 'job stuck since 03:00', by: 'alice' })).toBe(true);
    const reason = await whenAborted(lock.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('force-released');
    const next = await waiter;
    expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
    expect(await lock.release()).toBe(false);

    const [entry] = await operator.forceReleases({ key });
    expect(entry).toMatchObject({
      key,
      kind: 'mutex',
      reason: 'job stuck since 03:00',
      by: 'alice',
      evicted: [{ fencingToken: lock.fencingToken, owner: { engine: holder.engineId, app: 'worker' } }],
    });
    expect(entry!.fence).toBeGreaterThan(lock.fencingToken);
    expect(next.fencingToken).toBeGreaterThan(entry!.fence);
    expect(events).toEqual([{ ...entry, id: entry!.id }]);
    await next.release();
  });

  it('evicts every reader and permit holder, and only the kind asked for', async () => {
    const holder = env.engine();
    const operator = env.engine();
    const key = uniqueKey('shared');
    const readers = await Promise.all([1, 2].map(() => holder.acquire(key, { mode: 'read' })));
    const permit = await holder.acquire(key, { limit: 2 });
    await listed(operator, key); // the holder's engine is registered (and listens for notices)
    expect(await operator.forceRelease(key, { kind: 'mutex', reason: 'wrong kind' })).toBe(false);
    expect(await operator.forceRelease(key, { kind: 'read-write', reason: 'readers stuck' })).toBe(true);
    for (const r of readers)
      expect(((await whenAborted(r.signal)) as LockLostError).reason).toBe('force-released');
    expect(permit.signal.aborted).toBe(false);
    const writer = await operator.acquire(key, { mode: 'write', waitMs: 10_000 });
    expect(writer.fencingToken).toBeGreaterThan(Math.max(...readers.map((r) => r.fencingToken)));
    const [entry] = await operator.forceReleases({ key });
    expect(entry!.evicted).toHaveLength(2);
    expect(entry!.kind).toBe('read-write');
    await Promise.all([writer.release(), permit.release()]);
    expect(await operator.forceRelease(key, { reason: 'nothing left' })).toBe(false);
  });

  it('tells a mutex held once from a token lock, though Redis keeps both as a string', async () => {
    const holder = env.engine();
    const operator = env.engine();
    const [mk, tk] = [uniqueKey('once'), uniqueKey('token')];
    const mutex = await holder.acquire(mk);
    const token = await holder.acquire(tk, { reentrant: false });
    expect(await operator.inspect(mk)).toMatchObject({
      kind: 'mutex',
      holders: [{ fencingToken: mutex.fencingToken, holdCount: 1 }],
    });
    expect(await operator.inspect(tk)).toMatchObject({ kind: 'token', holders: [{ holdCount: 1 }] });
    // Each kind is released only when asked for by its own name (or by none).
    expect(await operator.forceRelease(mk, { kind: 'token', reason: 'wrong kind' })).toBe(false);
    expect(await operator.forceRelease(tk, { kind: 'mutex', reason: 'wrong kind' })).toBe(false);
    expect(mutex.isHeld && token.isHeld).toBe(true);
    expect(await operator.forceRelease(mk, { kind: 'mutex', reason: 'stuck' })).toBe(true);
    expect(await operator.forceRelease(tk, { kind: 'token', reason: 'stuck' })).toBe(true);
    expect(await whenAborted(mutex.signal)).toMatchObject({ reason: 'force-released' });
    expect(await whenAborted(token.signal)).toMatchObject({ reason: 'force-released' });
    const [forcedToken, forcedMutex] = await operator.forceReleases({});
    expect([forcedMutex?.kind, forcedMutex?.evicted[0]?.fencingToken]).toEqual(['mutex', mutex.fencingToken]);
    expect(forcedToken?.kind).toBe('token');
  });

  it('tells the holder of a multi-key lock when one of its keys is force-released', async () => {
    // Found by the simulator: a multi-key grant's owner id lacked the engine id, so the script's
    // notice went to no engine's channel, and the operator's own engine did not match it either.
    const holder = env.engine();
    const operator = env.engine();
    const [ka, kb] = [uniqueKey('multi-a'), uniqueKey('multi-b')];
    const both = await holder.acquire([ka, kb]);
    const own = await holder.acquire([uniqueKey('own-a'), uniqueKey('own-b')]);
    await listed(operator, ka); // the holder's engine is registered (and listens for notices)
    expect(await operator.forceRelease(ka, { reason: 'stuck' })).toBe(true);
    expect(await whenAborted(both.signal)).toMatchObject({ reason: 'force-released' });
    const [entry] = await operator.forceReleases({ key: ka });
    expect(entry!.evicted[0]!.owner.engine).toBe(holder.engineId);
    // From the holder's own engine, the grant is aborted directly.
    expect(await holder.forceRelease(own.keys[1]!, { reason: 'stuck' })).toBe(true);
    expect(await whenAborted(own.signal)).toMatchObject({ reason: 'force-released' });
    expect(await both.release()).toBe(false);
    expect(await own.release()).toBe(false);
  });

  it('refuses bad input with a TypeError or RangeError before any command', async () => {
    const engine = env.engine();
    await engine.isLocked('warm-up'); // the connection is up before counting
    const sent = await commandsDuring(env.server.port, async () => {
      await expect(engine.forceRelease('k', undefined as never)).rejects.toThrow(TypeError);
      await expect(engine.forceRelease('k', { reason: '' })).rejects.toThrow(RangeError);
      await expect(engine.forceRelease('k', { reason: 'x'.repeat(501) })).rejects.toThrow(RangeError);
      await expect(engine.forceRelease('', { reason: 'why' })).rejects.toThrow(RangeError);
      await expect(engine.forceRelease('k', { reason: 'why', kind: 'lock' as never })).rejects.toThrow(
        TypeError,
      );
      await expect(engine.inspect('k', { kind: 'mutexes' as never })).rejects.toThrow(TypeError);
      await expect(engine.inspect('k', { colour: 1 } as never)).rejects.toThrow(/Unknown option "colour"/);
      await expect(engine.list({ limit: 0 })).rejects.toThrow(RangeError);
      await expect(engine.list({ limit: 1.5 })).rejects.toThrow(RangeError);
      await expect(engine.list({ cursor: 'not-a-cursor' })).rejects.toThrow(TypeError);
      await expect(engine.list({ match: 42 as never })).rejects.toThrow(TypeError);
      await expect(engine.forceReleases({ limit: -1 })).rejects.toThrow(RangeError);
    });
    expect(sent).toEqual({});
  });
});

describe('the registry', () => {
  it('gives every key it writes a TTL and removes the engine record at close()', async () => {
    const engine = env.engine();
    const key = uniqueKey('ttl');
    const lock = await engine.acquire(key);
    await listed(engine, key);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
    const record = `${PREFIX}{~inspect}:engine:${engine.engineId}`;
    expect(await env.admin.exists(record)).toBe(1);
    await lock.release();
    await engine.close();
    expect(await env.admin.exists(record)).toBe(0);
    expect(await env.admin.zscore(`${PREFIX}{~inspect}:engines`, engine.engineId)).toBeNull();
    await expect(engine.list()).rejects.toThrow(/closed/);
  });

  it('keeps no record for an engine with inspection: false, yet inspect() still sees its locks', async () => {
    const quiet = env.engine({ inspection: false });
    const other = env.engine();
    const key = uniqueKey('quiet');
    const lock = await quiet.acquire(key);
    expect((await other.inspect(key))?.holders[0]?.owner).toEqual({
      engine: quiet.engineId,
      host: '',
      pid: 0,
      app: '',
    });
    expect(await env.admin.exists(`${PREFIX}{~inspect}:engine:${quiet.engineId}`)).toBe(0);
    await lock.release();
  });

  it('is not available on the in-memory testing backend: a TypeError, not a silent empty list', async () => {
    const engine = createInMemoryLockEngine();
    await expect(engine.list()).rejects.toThrow(/not supported/);
    await engine.close();
  });
});
