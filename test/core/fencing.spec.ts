/*
 * Fencing tokens strictly increase per key across holders, kinds and engines, also after the
 * counter expired (the server clock floors it); the counter is the only state a lock leaves
 * behind, and it always carries a TTL (bounded memory).
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import { keysWithoutTtl } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv } from '../support/lock-env';

const PREFIX = 'fence:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();

describe('fencing tokens', () => {
  it('strictly increase across holders of one key, whichever engine and kind (mutex or token lock) took it', async () => {
    const a = env.engine({ keyPrefix: PREFIX });
    const b = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('mixed');
    const tokens: number[] = [];
    for (let i = 0; i < 20; i++) {
      const engine = i % 2 === 0 ? a : b;
      const handle = await engine.acquire(key, i % 3 === 0 ? { reentrant: false } : {});
      tokens.push(handle.fencingToken);
      expect(await handle.release()).toBe(true);
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    expect(tokens.every((t) => Number.isSafeInteger(t))).toBe(true);
  });

  it('keep increasing after the counter of an idle key expired', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, fenceTtlMs: 1000 });
    const key = uniqueKey('expired-counter');
    const first = await engine.acquire(key);
    await first.release();
    const fence = keys.names(key).fence;
    await waitUntil(async () => (await env.admin.exists(fence)) === 0, {
      description: 'the fence counter to expire',
    });
    const second = await engine.acquire(key);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    await second.release();
  });

  it('leave only the counter behind, with a TTL no longer than fenceTtlMs', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, fenceTtlMs: 60_000 });
    const key = uniqueKey('bounded');
    await engine.using(key, {}, async () => undefined);
    const names = keys.names(key);
    expect(await env.admin.exists(names.lock)).toBe(0);
    const ttl = await env.admin.pttl(names.fence);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
  });
});
