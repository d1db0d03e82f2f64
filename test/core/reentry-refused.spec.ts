/*
 * Where re-entry stops: a lock that is lost (expired, deleted, taken over) cannot be re-entered
 * from its critical section (LockLostError, and no fresh lock is taken in its place); a released
 * one is over, so asking again is an ordinary acquisition; the token lock refuses re-entry at once.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import { LockLostError, LockNotAcquiredError } from '../../lib/core/errors';
import { waitUntil } from '../support/wait';
import {
  commandsDuring,
  holdCount,
  mutexFence,
  uniqueKey,
  useLockEnv,
  whenAborted,
} from '../support/lock-env';

const PREFIX = 'reentry:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();

const lockName = (key: string): string => keys.names(key, 'm').lock;

describe('re-entry of a lock that is gone', () => {
  it('fails with LockLostError when the key was deleted behind the holder, and aborts its signal', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('deleted');
    const outer = await engine.acquire(key);
    await env.admin.del(lockName(key));
    const err = await engine.runInLock(outer, () => engine.acquire(key)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockLostError);
    expect(outer.signal.aborted).toBe(true);
    expect(outer.signal.reason).toBeInstanceOf(LockLostError);
    // The failed re-entry did not take a fresh lock in its place.
    expect(await env.admin.exists(lockName(key))).toBe(0);
    expect(await outer.release()).toBe(false);
  });

  it('fails with LockLostError when the lease of the held lock ran out', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('expired');
    const outer = await engine.acquire(key, { leaseMs: 200 });
    const reason = await whenAborted(outer.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    const err = await engine
      .runInLock(outer, () => engine.acquire(key, { waitMs: 0 }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockLostError);
    expect((err as LockLostError).reason).toBe('expired');
    // The client's lease timer starts before the request is sent, so Redis may keep the old key a
    // few ms longer; what matters is that no fresh lock was taken in its place.
    await waitUntil(async () => (await env.admin.exists(lockName(key))) === 0, {
      description: 'the expired key to go',
    });
    expect(engine.stats().held).toBe(0);
  });

  it('fails with LockLostError when another owner took the lock over, and leaves the new holder alone', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('taken-over');
    const outer = await engine.acquire(key);
    await env.admin.del(lockName(key)); // e.g. a Redis restart without persistence
    const thief = await other.acquire(key, { waitMs: 0 });
    const err = await engine
      .runInLock(outer, () => engine.acquire(key, { waitMs: 0 }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockLostError);
    expect(outer.signal.aborted).toBe(true);
    expect(await holdCount(env.admin, lockName(key))).toBe(1);
    expect(await mutexFence(env.admin, lockName(key))).toBe(String(thief.fencingToken));
    expect(await outer.release()).toBe(false);
    expect(await thief.release()).toBe(true);
  });

  // A normally released grant is over (docs/GUARANTEES.md: work that outlives the section sees the
  // lock as held only while the grant is active), so asking again from its old context is an
  // ordinary acquisition: it never re-enters, it waits for another holder like anyone else.
  it('does not re-enter a handle released inside its own critical section: asking again is a fresh acquisition', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('released');
    const outer = await engine.acquire(key);
    expect(await outer.release()).toBe(true);
    const blocker = await other.acquire(key, { waitMs: 0 });
    const busy = await engine.runInLock(outer, () => engine.tryAcquire(key));
    expect(busy).toBeNull(); // not a re-entry into someone else's lock
    expect(await holdCount(env.admin, lockName(key))).toBe(1);
    await blocker.release();
    const fresh = await engine.runInLock(outer, () => engine.acquire(key, { waitMs: 0 }));
    expect(fresh.fencingToken).toBeGreaterThan(blocker.fencingToken);
    expect(outer.isHeld).toBe(false);
    expect(await fresh.release()).toBe(true);
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });
});

describe('the non-reentrant token lock', () => {
  it('fails at once with LockNotAcquiredError inside its own critical section, without a Redis command', async () => {
    // No registry of held locks: its timer would write for `outer` while the commands are counted.
    const engine = env.engine({ keyPrefix: PREFIX, inspection: false });
    const key = uniqueKey('token');
    const outer = await engine.acquire(key, { reentrant: false });
    let err: unknown;
    let tried: unknown = 'not run';
    const sent = await commandsDuring(env.server.port, async () => {
      err = await engine
        .runInLock(outer, () => engine.acquire(key, { reentrant: false, waitMs: 30_000 }))
        .catch((e: unknown) => e);
      tried = await engine.runInLock(outer, () => engine.tryAcquire(key, { reentrant: false }));
    });
    expect(err).toBeInstanceOf(LockNotAcquiredError);
    expect((err as Error).message).toMatch(/not reentrant/);
    expect(tried).toBeNull();
    expect(sent).toEqual({});
    expect(outer.isHeld).toBe(true);
    expect(await outer.release()).toBe(true);
  });

  it('refuses to mix the reentrant mutex and the token lock on one key within one context', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('mixed');
    await engine.using(key, {}, async () => {
      await expect(engine.acquire(key, { reentrant: false })).rejects.toBeInstanceOf(LockNotAcquiredError);
    });
    await engine.using(key, { reentrant: false }, async () => {
      await expect(engine.acquire(key)).rejects.toBeInstanceOf(LockNotAcquiredError);
      expect(await engine.tryAcquire(key)).toBeNull();
    });
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });
});
