/*
 * Read-write lock (`mode: 'read' | 'write'`) in one process against a real Redis: sharing and
 * exclusion, fencing, reentrancy, downgrade and the refused upgrade.
 */
import { LockNotAcquiredError, LockUpgradeError } from '../../lib/core/errors';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV, lockNames } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const READ = { mode: 'read' } as const;
const WRITE = { mode: 'write' } as const;

describe('read-write lock: sharing and exclusion', () => {
  it('lets several readers hold the lock at once and keeps the writer out until all have left', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-share');
    const a = await engine.acquire(key, READ);
    const b = await engine.acquire(key, READ);
    expect(a.isHeld && b.isHeld).toBe(true);
    expect(await env.admin.zcard(lockNames(key, 'rw').aux)).toBe(2);
    expect(await engine.tryAcquire(key, WRITE)).toBeNull();
    await a.release();
    expect(await engine.tryAcquire(key, WRITE)).toBeNull();
    await b.release();
    const w = await engine.tryAcquire(key, WRITE);
    expect(w).not.toBeNull();
    await w!.release();
    expect(await env.admin.exists(lockNames(key, 'rw').lock, lockNames(key, 'rw').aux)).toBe(0);
  });

  it('keeps readers and other writers out while a writer holds the lock', async () => {
    const engine = env.engine();
    const other = env.engine();
    const key = uniqueKey('rw-excl');
    const w = await engine.acquire(key, WRITE);
    expect(await other.tryAcquire(key, READ)).toBeNull();
    expect(await other.tryAcquire(key, WRITE)).toBeNull();
    expect(await engine.tryAcquire(key, READ)).toBeNull(); // a sibling context of the same process
    await w.release();
    const r = await other.tryAcquire(key, READ);
    expect(r).not.toBeNull();
    await r!.release();
  });

  it('hands out fencing tokens that increase across readers and writers', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-fence');
    const r1 = await engine.acquire(key, READ);
    const r2 = await engine.acquire(key, READ);
    await r1.release();
    await r2.release();
    const w = await engine.acquire(key, WRITE);
    await w.release();
    const r3 = await engine.acquire(key, READ);
    await r3.release();
    const tokens = [r1, r2, w, r3].map((h) => h.fencingToken);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  });

  it('does not exclude the mutex, fair lock or semaphore of the same key (they are other locks)', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-kinds');
    const w = await engine.acquire(key, WRITE);
    const others = await Promise.all([
      engine.tryAcquire(key),
      engine.tryAcquire(key, { fair: true }),
      engine.tryAcquire(key, { limit: 1 }),
    ]);
    expect(others.every((h) => h?.isHeld)).toBe(true);
    for (const h of others) await h!.release();
    await w.release();
  });
});

describe('read-write lock: reentrancy, downgrade and upgrade', () => {
  it('re-enters a read lock in the same async context and needs one release per acquire', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-reenter-read');
    const names = lockNames(key, 'rw');
    await engine.using(key, READ, async (outer) => {
      const inner = await engine.acquire(key, READ);
      expect(inner.fencingToken).toBe(outer.fencingToken);
      expect(await env.admin.zcard(names.aux)).toBe(1); // one holder, two holds
      const holds = Object.values(await env.admin.hgetall(names.lock));
      expect(
        holds
          .join(' ')
          .split(' ')
          .filter((h) => h.startsWith('r:')),
      ).toHaveLength(2);
      expect(await inner.release()).toBe(true);
      expect(outer.isHeld).toBe(true);
      expect(await env.admin.zcard(names.aux)).toBe(1);
    });
    expect(await env.admin.exists(names.lock)).toBe(0);
  });

  it('re-enters a write lock in the same async context', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-reenter-write');
    await engine.using(key, WRITE, async () => {
      const inner = await engine.acquire(key, { ...WRITE, waitMs: 0 });
      expect(inner.isHeld).toBe(true);
      await inner.release();
      const read = await engine.tryAcquire(key, READ); // re-entry as read
      expect(read?.isHeld).toBe(true);
      await read!.release();
    });
  });

  it('downgrades: the writer takes the read lock, and the read hold remains after the write hold is released', async () => {
    const engine = env.engine();
    const other = env.engine();
    const key = uniqueKey('rw-downgrade');
    const names = lockNames(key, 'rw');
    const w = await engine.acquire(key, WRITE);
    await engine.runInLock(w, async () => {
      const r = await engine.acquire(key, READ);
      expect(r.fencingToken).toBe(w.fencingToken);
      expect(await other.tryAcquire(key, READ)).toBeNull(); // still a writer
      expect(await w.release()).toBe(true);
      expect(r.isHeld).toBe(true);
      expect(await env.admin.hget(names.lock, 'writer')).toBeNull();
      // Now only a reader: other readers share it, writers stay out.
      const shared = await other.tryAcquire(key, READ);
      expect(shared).not.toBeNull();
      expect(await other.tryAcquire(key, WRITE)).toBeNull();
      await shared!.release();
      expect(await r.release()).toBe(true);
    });
    expect(await env.admin.exists(names.lock, names.aux)).toBe(0);
  });

  it('refuses read → write upgrade with LockUpgradeError, and the read lock stays held', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-upgrade');
    await engine.using(key, READ, async (r) => {
      await expect(engine.acquire(key, WRITE)).rejects.toBeInstanceOf(LockUpgradeError);
      await expect(engine.tryAcquire(key, WRITE)).rejects.toBeInstanceOf(LockUpgradeError);
      expect(r.isHeld).toBe(true);
      expect(r.signal.aborted).toBe(false);
    });
  });

  it('refuses the upgrade also when the context holds only the read hold left over from a downgrade', async () => {
    const engine = env.engine();
    const key = uniqueKey('rw-upgrade-after-downgrade');
    const w = await engine.acquire(key, WRITE);
    let r!: Awaited<ReturnType<typeof engine.acquire>>;
    await engine.runInLock(w, async () => {
      r = await engine.acquire(key, READ);
      await w.release();
      // The frame still names the released write handle; the grant lives on through the read hold.
      const error = await engine.acquire(key, { ...WRITE, waitMs: 5_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockUpgradeError);
      expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    });
    await engine.runInLock(r, async () => {
      await expect(engine.acquire(key, WRITE)).rejects.toBeInstanceOf(LockUpgradeError);
    });
    expect(r.isHeld).toBe(true);
    await r.release();
  });
});
