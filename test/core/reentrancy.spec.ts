/*
 * Ownership by async context: nested calls inside a critical section re-enter (one hold per
 * acquire, one release per hold, visible in the Redis hash); everything started outside it waits;
 * current() sees the lock inside the section only.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import { holdCount, nextEvent, track, uniqueKey, useLockEnv } from '../support/lock-env';

const PREFIX = 'reent:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();

const lockName = (key: string): string => keys.names(key, 'm').lock;

describe('re-entry in the same async context', () => {
  it('re-enters nested using() calls and needs one release per hold', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('nested-using');
    const seen: number[] = [];
    await engine.using(key, {}, async (outer) => {
      seen.push(await holdCount(env.admin, lockName(key)));
      await engine.using(key, {}, async (middle) => {
        expect(middle.fencingToken).toBe(outer.fencingToken);
        seen.push(await holdCount(env.admin, lockName(key)));
        await engine.using(key, { waitMs: 0 }, async (inner) => {
          expect(inner.fencingToken).toBe(outer.fencingToken);
          seen.push(await holdCount(env.admin, lockName(key)));
        });
        seen.push(await holdCount(env.admin, lockName(key)));
      });
      seen.push(await holdCount(env.admin, lockName(key)));
      expect(outer.isHeld).toBe(true);
    });
    expect(seen).toEqual([1, 2, 3, 2, 1]);
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });

  it('re-enters inside runInLock() and keeps the lock until the last of its holds is released', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('run-in-lock');
    const outer = await engine.acquire(key);
    const nested = await engine.runInLock(outer, async () => {
      const second = await engine.acquire(key, { waitMs: 0 });
      const third = await engine.tryAcquire(key);
      return [second, third!] as const;
    });
    expect(await holdCount(env.admin, lockName(key))).toBe(3);
    expect(nested.map((h) => h.fencingToken)).toEqual([outer.fencingToken, outer.fencingToken]);

    expect(await nested[1].release()).toBe(true);
    expect(await holdCount(env.admin, lockName(key))).toBe(2);
    expect(await outer.release()).toBe(true); // releases its own hold; the order of releases is free
    expect(await holdCount(env.admin, lockName(key))).toBe(1);
    // Still held: another owner cannot take it.
    expect(await other.tryAcquire(key)).toBeNull();
    expect(nested[0].isHeld).toBe(true);

    expect(await nested[0].release()).toBe(true);
    expect(await env.admin.exists(lockName(key))).toBe(0);
    const next = await other.tryAcquire(key);
    expect(next).not.toBeNull();
    expect(next!.fencingToken).toBeGreaterThan(outer.fencingToken);
    await next!.release();
  });

  it('re-enters from deep in the async call tree (timers, promise chains) of the critical section', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('deep');
    await engine.using(key, {}, async (outer) => {
      const viaTimer = await new Promise<LockHandle>((resolve, reject) =>
        setTimeout(() => engine.acquire(key, { waitMs: 0 }).then(resolve, reject), 5),
      );
      const viaChain = await Promise.resolve().then(() => engine.tryAcquire(key));
      expect(viaTimer.fencingToken).toBe(outer.fencingToken);
      expect(viaChain?.fencingToken).toBe(outer.fencingToken);
      expect(await holdCount(env.admin, lockName(key))).toBe(3);
      await viaTimer.release();
      await viaChain!.release();
    });
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });
});

describe('callers outside the critical section', () => {
  it('makes a sibling call of the same process, started outside the critical section, wait for the release', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('sibling');
    let releaseFirst!: () => void;
    const gate = new Promise<void>((resolve) => (releaseFirst = resolve));
    const firstHeld = nextEvent(engine, 'acquired', (e) => e.key === key);
    const first = track(
      engine.using(key, {}, async (h) => {
        await gate;
        return h.fencingToken;
      }),
    );
    await firstHeld;
    const contended = nextEvent(engine, 'contended', (e) => e.key === key);
    const sibling = track(engine.using(key, { waitMs: 60_000 }, async (h) => h.fencingToken));

    await contended; // the sibling asked Redis and found the lock busy
    expect(sibling.settled).toBe(false);
    expect(await holdCount(env.admin, lockName(key))).toBe(1); // no re-entry happened
    releaseFirst();
    const [a, b] = [await first.result, await sibling.result];
    expect(b).toBeGreaterThan(a);
  });

  it('makes a sibling wait even when it was started by the same caller just before the critical section', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('siblings-all');
    const inside: number[] = [];
    let active = 0;
    const body = async (): Promise<void> => {
      active++;
      inside.push(active);
      await new Promise((resolve) => setTimeout(resolve, 5));
      active--;
    };
    await Promise.all(Array.from({ length: 5 }, () => engine.using(key, { waitMs: 60_000 }, body)));
    expect(inside).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('current()', () => {
  it('returns the handle held by this async context, and nothing outside it', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const a = uniqueKey('current-a');
    const b = uniqueKey('current-b');
    expect(engine.current()).toBeUndefined();
    expect(engine.current(a)).toBeUndefined();
    let outsideDuring: unknown = 'unset';
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = nextEvent(engine, 'acquired', (e) => e.key === a);
    const section = engine.using(a, {}, async (ha) => {
      expect(engine.current()).toBe(ha);
      expect(engine.current(a)).toBe(ha);
      expect(engine.current(b)).toBeUndefined();
      await engine.using(b, {}, async (hb) => {
        expect(engine.current()).toBe(hb); // the innermost lock
        expect(engine.current(a)).toBe(ha);
        expect(engine.current(b)).toBe(hb);
      });
      expect(engine.current()).toBe(ha);
      expect(engine.current(b)).toBeUndefined();
      await gate;
      expect(await ha.release()).toBe(true);
      expect(engine.current(a)).toBeUndefined(); // released: no longer "current"
    });
    await held;
    outsideDuring = engine.current(a); // a sibling context while the section runs
    release();
    await section;
    expect(outsideDuring).toBeUndefined();
    expect(engine.current()).toBeUndefined();
  });

  it('does not see the locks of another engine', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('current-other');
    await engine.using(key, {}, async (h) => {
      expect(engine.current(key)).toBe(h);
      expect(other.current(key)).toBeUndefined();
      expect(other.current()).toBeUndefined();
    });
  });
});
