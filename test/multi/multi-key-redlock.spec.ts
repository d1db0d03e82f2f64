/*
 * Multi-key locks over RedLock (three independent masters): each key is its own group, taken by a
 * quorum round of the RedLock kind; still all or none and deadlock-free.
 */
import { createLockEngine, type LockEngine } from '../../lib/core';
import { sharedRedisGroup, type RedisGroup } from '../support/redis-topologies';

let group: RedisGroup;
let engines: LockEngine[] = [];
const engine = (): LockEngine => {
  // A generous node timeout: on a loaded machine a node may take longer than the default 500 ms.
  const e = createLockEngine({ redlock: { nodes: group.urls, nodeTimeoutMs: 3_000 }, keyPrefix: 'mrl:' });
  engines.push(e);
  return e;
};

beforeAll(async () => {
  group = await sharedRedisGroup();
});
afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('takes every key or none across the masters', async () => {
  const [a, b] = [engine(), engine()];
  const held = await b.acquire('rl:y');
  expect(await a.tryAcquire(['rl:x', 'rl:y'])).toBeNull();
  const x = await b.tryAcquire('rl:x'); // given back
  expect(x).not.toBeNull();
  await Promise.all([x!.release(), held.release()]);
  const both = await a.acquire(['rl:y', 'rl:x'], { waitMs: 0 });
  expect(Object.keys(both.fencingTokens).sort()).toEqual(['rl:x', 'rl:y']);
  expect(await both.release()).toBe(true);
});

it('never deadlocks or loses an update with opposite orders', async () => {
  const [a, b] = [engine(), engine()];
  const counters: Record<string, number> = { 'rl:p': 0, 'rl:q': 0 };
  const caller = async (e: LockEngine, keys: string[]): Promise<void> => {
    for (let i = 0; i < 40; i++) {
      await e.using(keys, { waitMs: 30_000 }, async () => {
        const before = keys.map((k) => counters[k]!);
        await tick();
        keys.forEach((k, j) => (counters[k] = before[j]! + 1));
      });
    }
  };
  await Promise.all([
    caller(a, ['rl:p', 'rl:q']),
    caller(b, ['rl:q', 'rl:p']),
    caller(a, ['rl:q', 'rl:p']),
    caller(b, ['rl:p', 'rl:q']),
  ]);
  expect(counters).toEqual({ 'rl:p': 160, 'rl:q': 160 });
});
