/*
 * RedLock at the edges (RELIABILITY.md scenario 21, issue 18 point 6), on 3 independent masters:
 * - two minority restarts (without persistence) one after the other during one hold: renewal puts
 *   the lock back on a node that came back empty while a majority still holds it, so the lock
 *   survives both and nobody else gets it;
 * - a node that answers with foreign data at the lock's key votes against; it is not "unreachable".
 */
import { createLockEngine, LockEngine, LockNotAcquiredError, LockWrongTypeError } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import type { CreateLockEngineOptions } from '../../lib/core';
import { redisCommand } from '../support/redis-command';
import type { RedisServerProcess } from '../support/redis-server';
import { startRedisGroup, type RedisGroup } from '../support/redis-topologies';
import { waitUntil } from '../support/wait';

jest.setTimeout(60_000);

const PREFIX = 'rlr:';
const keys = new KeySpace(PREFIX);
let group: RedisGroup;
let engines: LockEngine[] = [];

function engine(options: Partial<CreateLockEngineOptions> = {}): LockEngine {
  const e = createLockEngine({ redlock: group.urls, keyPrefix: PREFIX, ...options });
  engines.push(e);
  return e;
}
const node = (i: number): RedisServerProcess => group.servers[i]!;
const onNode = (i: number, args: (string | number)[]) =>
  redisCommand(node(i).port, args, { timeoutMs: 2000 });

beforeAll(async () => {
  group = await startRedisGroup(3);
});
afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
  for (const server of group.servers) if (!server.running) await server.restart();
  await Promise.all(group.servers.map((s) => redisCommand(s.port, ['FLUSHALL'])));
});
afterAll(async () => {
  await group?.stop();
});

describe('RedLock renewal after minority restarts', () => {
  it('keeps a held lock through two minority restarts one after the other', async () => {
    const holder = engine({ watchdogLeaseMs: 3_000, renewEveryMs: 300 });
    const other = engine();
    const key = 'restarts';
    const lockName = keys.names(key).lock;
    const handle = await holder.acquire(key, { waitMs: 0 });
    for (const i of [0, 1]) {
      await node(i).restart(); // empty: no persistence
      // The next renewal puts the lock back on the restarted node.
      await waitUntil(async () => (await onNode(i, ['EXISTS', lockName])) === 1, {
        timeoutMs: 5_000,
        description: `the lock to be back on node ${i}`,
      });
    }
    expect(handle.signal.aborted).toBe(false);
    expect(handle.isHeld).toBe(true);
    await expect(other.tryAcquire(key, { waitMs: 0 })).resolves.toBeNull();
    expect(await handle.release()).toBe(true);
    for (const i of [0, 1, 2]) expect(await onNode(i, ['EXISTS', lockName])).toBe(0);
  });
});

describe('RedLock and foreign data', () => {
  it('counts a node with foreign data at the key as a vote against, not as unreachable', async () => {
    const e = engine({ commandTimeoutMs: 1_000 });
    const key = 'foreign';
    await onNode(0, ['SET', keys.names(key).lock, 'application data']);
    node(2).kill('SIGKILL');
    await node(2).exited;
    const err = (await e.acquire(key, { waitMs: 0 }).catch((x: unknown) => x)) as Error;
    expect(err).toBeInstanceOf(LockNotAcquiredError);
    expect(err.message).toMatch(
      /1 of 3 nodes granted, 0 busy, 1 hold foreign data at the key, 1 did not answer/,
    );
    expect(err.message).not.toMatch(/only \d of 3 nodes answered/);
    // The foreign data is left alone.
    expect(await onNode(0, ['GET', keys.names(key).lock])).toBe('application data');
  });

  it('reports foreign data on a majority as LockWrongTypeError', async () => {
    const e = engine();
    const key = 'foreign-majority';
    for (const i of [0, 1]) await onNode(i, ['SET', keys.names(key).lock, 'application data']);
    await expect(e.acquire(key, { waitMs: 0 })).rejects.toBeInstanceOf(LockWrongTypeError);
  });
});
