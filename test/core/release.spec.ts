/*
 * Release is owner-checked, idempotent and never throws: a second release, a release after the
 * lease ran out and a stale holder's release all resolve false and leave any new holder alone.
 */
import { LockLostError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { holdCount, keySnapshot, uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const PREFIX = 'rel:';
const keys = new KeySpace(PREFIX);
const lockName = (key: string): string => keys.names(key, 'm').lock;
const env = useLockEnv();

const KINDS: [string, LockOptions][] = [
  ['reentrant mutex', {}],
  ['token lock', { reentrant: false }],
];

describe.each(KINDS)('release of the %s', (_kind, options) => {
  it('returns true once and false on a second release', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('double');
    const released: string[] = [];
    engine.events.on('released', (e) => released.push(e.result));
    const handle = await engine.acquire(key, options);
    expect(await handle.release()).toBe(true);
    expect(await handle.release()).toBe(false);
    expect(await env.admin.exists(lockName(key))).toBe(0);
    expect(released).toEqual(['released']); // the second call did not even reach Redis
    expect(handle.signal.aborted).toBe(false); // a normal release is not a loss
  });

  it('returns false for concurrent releases of one handle, releasing once', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('concurrent');
    const handle = await engine.acquire(key, options);
    const results = await Promise.all([handle.release(), handle.release(), handle.release()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });

  it('returns false, without throwing, when the lease already ran out', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('expired');
    const handle = await engine.acquire(key, { ...options, leaseMs: 200 });
    await whenAborted(handle.signal);
    await waitUntil(async () => (await env.admin.exists(lockName(key))) === 0, {
      description: 'the key to expire',
    });
    await expect(handle.release()).resolves.toBe(false);
    await expect(handle.extend()).rejects.toBeInstanceOf(LockLostError);
  });

  it('returns false for a stale holder and leaves the new holder untouched', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('stale');
    const stale = await engine.acquire(key, { ...options, leaseMs: 200 });
    await whenAborted(stale.signal);
    const current = await other.acquire(key, { ...options, waitMs: 30_000 });
    const snapshot = (): Promise<unknown> => keySnapshot(env.admin, lockName(key));
    const before = await snapshot();

    expect(await stale.release()).toBe(false);
    await expect(stale.extend(60_000)).rejects.toBeInstanceOf(LockLostError);
    expect(await snapshot()).toEqual(before);
    expect(await env.admin.pttl(lockName(key))).toBeGreaterThan(0);
    expect(current.isHeld).toBe(true);
    expect(current.signal.aborted).toBe(false);
    expect(current.fencingToken).toBeGreaterThan(stale.fencingToken);
    expect(await current.release()).toBe(true);
  });

  it('is refused by Redis (owner check) for a holder that does not yet know it lost the lock', async () => {
    // Watchdog lease of 30 s: the old holder's engine still believes it holds the lock when it
    // releases, so only the owner id in the script stands between it and the new holder's key.
    const engine = env.engine({ keyPrefix: PREFIX });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('unaware');
    const stale = await engine.acquire(key, options);
    await env.admin.del(lockName(key)); // e.g. a Redis restart without persistence
    const current = await other.acquire(key, { ...options, waitMs: 0 });
    expect(stale.isHeld).toBe(true); // it does not know yet
    const before = await env.admin.dump(lockName(key));

    expect(await stale.release()).toBe(false);
    expect(await env.admin.dump(lockName(key))).toEqual(before);
    expect(stale.signal.aborted).toBe(true); // now it knows
    expect(current.isHeld).toBe(true);
    expect(await current.release()).toBe(true);
  });
});

describe('release of a stale hold while the same owner still holds the lock', () => {
  it('does not remove a second hold when one handle is released twice', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('holds');
    const outer = await engine.acquire(key);
    const inner = await engine.runInLock(outer, () => engine.acquire(key));
    expect(await holdCount(env.admin, lockName(key))).toBe(2);
    expect(await inner.release()).toBe(true);
    expect(await inner.release()).toBe(false);
    expect(await holdCount(env.admin, lockName(key))).toBe(1);
    expect(outer.isHeld).toBe(true);
    expect(await outer.release()).toBe(true);
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });
});
