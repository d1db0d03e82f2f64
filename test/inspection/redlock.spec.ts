/*
 * Inspection with RedLock over 3 independent masters: the registry is written to every node, a holder
 * is reported when a majority of nodes hold its lock, and a force release runs on every node.
 */
import { createLockEngine, type LockEngine, type LockLostError } from '../../lib/core';
import { sharedRedisGroup, type RedisGroup } from '../support/redis-topologies';
import { uniqueKey, whenAborted } from '../support/lock-env';
import { waitUntil } from '../support/wait';

jest.setTimeout(120_000);

const PREFIX = 'rlinsp:';
let group: RedisGroup;
let engines: LockEngine[] = [];

beforeAll(async () => {
  group = await sharedRedisGroup();
});

afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});

function engine(app: string): LockEngine {
  const e = createLockEngine({ redlock: group.urls, keyPrefix: PREFIX, app });
  engines.push(e);
  return e;
}

describe('inspection with RedLock', () => {
  it('lists a holder held on a majority and force-releases it on every node', async () => {
    const holder = engine('holder');
    const operator = engine('operator');
    const key = uniqueKey('rl');
    const lock = await holder.acquire(key);
    const info = await waitUntil(async () => (await operator.list({ match: key })).locks[0], {
      description: 'the lock listed',
    });
    expect(info).toMatchObject({
      key,
      kind: 'mutex',
      holders: [
        {
          owner: { engine: holder.engineId, app: 'holder', pid: process.pid },
          fencingToken: lock.fencingToken,
        },
      ],
    });
    expect(await operator.forceRelease(key, { reason: 'drill' })).toBe(true);
    expect(((await whenAborted(lock.signal)) as LockLostError).reason).toBe('force-released');
    const next = await operator.acquire(key, { waitMs: 10_000 });
    expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
    expect(await operator.isLocked(key)).toBe(true);
    const [entry] = await operator.forceReleases({ key });
    expect(entry).toMatchObject({ key, reason: 'drill', evicted: [{ owner: { app: 'holder' } }] });
    await next.release();
    expect(await operator.inspect(key)).toBeNull();
  });
});
