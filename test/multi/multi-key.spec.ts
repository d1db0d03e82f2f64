/*
 * Multi-key locks on a real Redis, in one process: all or none, one script call per acquisition,
 * tokens shared with single-key lockers, re-entry by async context, and failures that leave no
 * key held (a foreign key type, an abort, a busy key).
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { LockLostError, LockPartialReentryError, LockWrongTypeError } from '../../lib/core/errors';
import { commandsDuring, track, uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const PREFIX = 'multi:';
const space = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;
let other: LockEngine;

beforeEach(async () => {
  const client = env.client();
  await client.ping();
  engine = env.engine({ redis: client, keyPrefix: PREFIX });
  other = env.engine({ keyPrefix: PREFIX });
});

const lockName = (key: string): string => space.names(key).lock;
async function heldKeys(keys: string[]): Promise<string[]> {
  const exists = await Promise.all(keys.map((k) => env.admin.exists(lockName(k))));
  return keys.filter((_, i) => exists[i] === 1);
}
function keySet(n: number): string[] {
  const base = uniqueKey('set');
  return Array.from({ length: n }, (_, i) => `${base}:${i}`);
}

describe('taking several keys', () => {
  it('takes every key at once, de-duplicated and in one global order, with a token per key', async () => {
    const [a, b, c] = keySet(3) as [string, string, string];
    const handle = await engine.acquire([c, a, b, a], { waitMs: 0 });
    expect(handle.keys).toEqual([a, b, c]);
    expect(Object.keys(handle.fencingTokens).sort()).toEqual([a, b, c]);
    expect(await heldKeys([a, b, c])).toEqual([a, b, c]);
    for (const key of [a, b, c]) expect(await other.tryAcquire(key)).toBeNull();
    expect(await handle.release()).toBe(true);
    expect(await heldKeys([a, b, c])).toEqual([]);
    expect(await handle.release()).toBe(false);
  });

  it('sends one script call for all keys on a single Redis', async () => {
    const keys = keySet(5);
    let release: Promise<boolean> | undefined;
    const sent = await commandsDuring(env.server.port, async () => {
      const handle = await engine.acquire(keys, { waitMs: 0 });
      release = handle.release();
    });
    await release;
    // One EVALSHA takes all five keys (the releases add one per key).
    expect((sent.evalsha ?? 0) + (sent.eval ?? 0)).toBe(1 + keys.length);
  });

  it("shares each key's token sequence with single-key lockers (strictly increasing)", async () => {
    const [a, b] = keySet(2) as [string, string];
    const single = await other.acquire(a, { waitMs: 0 });
    await single.release();
    const multi = await engine.acquire([a, b], { waitMs: 0 });
    await multi.release();
    const again = await other.acquire(a, { waitMs: 0 });
    await again.release();
    expect(multi.fencingTokens[a]!).toBeGreaterThan(single.fencingToken);
    expect(again.fencingToken).toBeGreaterThan(multi.fencingTokens[a]!);
  });

  it('takes nothing when one key is busy (tryAcquire resolves null)', async () => {
    const [a, b, c] = keySet(3) as [string, string, string];
    const holder = await other.acquire(b);
    expect(await engine.tryAcquire([a, b, c])).toBeNull();
    expect(await heldKeys([a, c])).toEqual([]);
    await holder.release();
    const handle = await engine.tryAcquire([a, b, c]);
    expect(handle?.keys).toEqual([a, b, c]);
    await handle!.release();
  });

  it('waits for the busy key without holding the others, then takes all', async () => {
    const [a, b] = keySet(2) as [string, string];
    const holder = await other.acquire(b);
    const waiting = track(engine.acquire([a, b], { waitMs: 30_000 }));
    // Its busy attempt recorded a waiter, so the holder's release publishes the wake-up (the first
    // attempt of a new engine follows its ACL check: wait for it rather than race it).
    await waitUntil(async () => (await env.admin.zcard(space.names(b).aux)) === 1, {
      description: 'the waiter recorded',
    });
    // While it waits, the free key stays free for everybody else.
    const free = await other.acquire(a, { waitMs: 5_000 });
    await free.release();
    expect(waiting.settled).toBe(false);
    expect(await env.admin.zcard(space.names(b).aux)).toBe(1);
    await holder.release();
    const handle = await waiting.result;
    expect(handle.keys).toEqual([a, b]);
    await handle.release();
  });

  it('works as the token lock with reentrant: false', async () => {
    const [a, b] = keySet(2) as [string, string];
    const handle = await engine.acquire([a, b], { reentrant: false, waitMs: 0 });
    expect(await env.admin.type(lockName(a))).toBe('string');
    expect(await other.tryAcquire(a)).toBeNull();
    expect(await engine.tryAcquire([b], { reentrant: false })).toBeNull();
    expect(await handle.release()).toBe(true);
    expect(await heldKeys([a, b])).toEqual([]);
  });
});

describe('one handle for all keys', () => {
  it('aborts the signal when any key is lost, and release reports it', async () => {
    const [a, b] = keySet(2) as [string, string];
    const handle = await engine.acquire([a, b]);
    await env.admin.del(lockName(b));
    await expect(handle.extend()).rejects.toBeInstanceOf(LockLostError);
    expect((await whenAborted(handle.signal)) as LockLostError).toBeInstanceOf(LockLostError);
    expect(await handle.release()).toBe(false);
    expect(await heldKeys([a, b])).toEqual([]);
  });

  it('extends every key', async () => {
    const [a, b] = keySet(2) as [string, string];
    const handle = await engine.acquire([a, b], { leaseMs: 5_000 });
    await handle.extend(60_000);
    for (const key of [a, b]) expect(await env.admin.pttl(lockName(key))).toBeGreaterThan(5_000);
    await handle.release();
  });
});

describe('re-entry by async context', () => {
  it('runs using() in the critical section of every key: single and subset re-enter', async () => {
    const [a, b, c] = keySet(3) as [string, string, string];
    await engine.using([a, b, c], {}, async (lock) => {
      const single = await engine.acquire(b, { waitMs: 0 });
      expect(single.fencingToken).toBe(lock.fencingTokens[b]);
      const subset = await engine.acquire([c, a], { waitMs: 0 });
      expect(subset.fencingTokens).toEqual({ [a]: lock.fencingTokens[a], [c]: lock.fencingTokens[c] });
      expect(engine.current(c)?.fencingToken).toBe(lock.fencingTokens[c]);
      await single.release();
      await subset.release();
      expect(await heldKeys([a, b, c])).toEqual([a, b, c]);
    });
    expect(await heldKeys([a, b, c])).toEqual([]);
  });

  it('refuses a superset of what the context holds, with a clear error and no key taken', async () => {
    const [a, b] = keySet(2) as [string, string];
    await engine.using(a, {}, async () => {
      const err = (await engine.acquire([a, b]).catch((e: unknown) => e)) as LockPartialReentryError;
      expect(err).toBeInstanceOf(LockPartialReentryError);
      expect(err.heldKeys).toEqual([a]);
      expect(err.missingKeys).toEqual([b]);
      expect(err.message).toMatch(/could deadlock/);
      expect(await heldKeys([b])).toEqual([]);
    });
  });
});

describe('failures in the middle leave no key held', () => {
  it('reports a key of a foreign type and leaves every key as it was', async () => {
    const [a, b, c] = keySet(3) as [string, string, string];
    await env.admin.set(lockName(b), 'user data');
    const err = (await engine.acquire([a, b, c]).catch((e: unknown) => e)) as LockWrongTypeError;
    expect(err).toBeInstanceOf(LockWrongTypeError);
    expect(err.redisKey).toBe(lockName(b));
    expect(await heldKeys([a, c])).toEqual([]);
    expect(await env.admin.get(lockName(b))).toBe('user data');
  });

  it('gives up on abort while waiting, holding nothing', async () => {
    const [a, b] = keySet(2) as [string, string];
    const holder = await other.acquire(b);
    const controller = new AbortController();
    const waiting = track(engine.acquire([a, b], { waitMs: 30_000, signal: controller.signal }));
    controller.abort(new Error('stop'));
    await expect(waiting.result).rejects.toThrow('stop');
    expect(await heldKeys([a])).toEqual([]);
    await holder.release();
    expect(await heldKeys([a, b])).toEqual([]);
  });
});
