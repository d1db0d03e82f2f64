/*
 * RedLock over 5 independent masters (real redis-server processes, killed and frozen during the
 * tests). One group of masters and one fencing-oracle server for the whole file.
 */
import {
  createLockEngine,
  LockEngine,
  LockHandle,
  LockLostError,
  LockNotAcquiredError,
  LockRedisError,
} from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import type { CreateLockEngineOptions } from '../../lib/core';
import { redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { startRedisGroup, type RedisGroup } from '../support/redis-topologies';
import { sleep, waitUntil } from '../support/wait';
import { recordFigures } from '../support/topology-figures';
import { FenceOracle } from '../support/fence-oracle';
import { expectBaselineRound, spawnLockWorkers, stopLockWorkers } from '../support/topology-workers';

jest.setTimeout(120_000);

const PREFIX = 'rl:';
const keys = new KeySpace(PREFIX);

let group: RedisGroup;
let oracleServer: RedisServerProcess;
let oracle: FenceOracle;
let engines: LockEngine[] = [];

function engine(options: Partial<CreateLockEngineOptions> = {}): LockEngine {
  const e = createLockEngine({ redlock: group.urls, keyPrefix: PREFIX, ...options });
  engines.push(e);
  return e;
}

const node = (i: number): RedisServerProcess => group.servers[i]!;
const onNode = (i: number, args: (string | number)[]) =>
  redisCommand(node(i).port, args, { timeoutMs: 2000 });

/**
 * Expects `args` to answer `expected` on all 5 nodes. A RedLock call returns once a quorum (3) has
 * answered; the other 2 nodes get the same script and answer a moment later, so they are waited for.
 */
async function expectOnEveryNode(args: (string | number)[], expected: unknown): Promise<void> {
  const answers = (): Promise<unknown[]> => Promise.all([0, 1, 2, 3, 4].map((i) => onNode(i, args)));
  await waitUntil(async () => (await answers()).every((a) => a === expected), {
    timeoutMs: 5000,
    description: `${args.join(' ')} to be ${String(expected)} on every node`,
  }).catch(() => undefined); // the assertion below shows what each node answered
  expect(await answers()).toEqual([expected, expected, expected, expected, expected]);
}

beforeAll(async () => {
  [group, oracleServer] = await Promise.all([startRedisGroup(5), startRedis()]);
  oracle = new FenceOracle(oracleServer.url);
});

afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
  // Every test starts with 5 healthy, empty masters.
  for (const server of group.servers) {
    if (server.paused) server.resume();
    if (!server.running) await server.restart();
  }
  await Promise.all(group.servers.map((s) => redisCommand(s.port, ['FLUSHALL'])));
});

afterAll(async () => {
  await oracle?.close();
  await Promise.all([group?.stop(), oracleServer?.stop()]);
});

describe('RedLock over 5 independent masters', () => {
  it('keeps mutual exclusion and strictly increasing tokens across 3 OS processes', async () => {
    const workers = await spawnLockWorkers(3, {
      topology: { kind: 'redlock', urls: group.urls },
      oracleUrl: oracleServer.url,
      callers: 2,
      holdMs: 2,
    });
    try {
      const result = await expectBaselineRound(workers, oracle, 'redlock', {
        scope: 'rl-baseline',
        grants: 150,
        figures: 'baseline: 3 processes x 2 callers, 5 masters',
      });
      expect(result.lost).toBe(0);
    } finally {
      await stopLockWorkers(workers);
    }
  });

  it('keeps granting with 2 of 5 masters down (one killed, one frozen), tokens still increasing', async () => {
    node(3).kill();
    await node(3).exited;
    node(4).pause();
    const e = engine();
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lock = await e.acquire('two-down', { leaseMs: 10_000 });
      tokens.push(lock.fencingToken);
      expect(await lock.release()).toBe(true);
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    // The grant and the release went to the live majority.
    expect(await onNode(0, ['EXISTS', keys.names('two-down').lock])).toBe(0);
    expect(Number(await onNode(0, ['GET', keys.names('two-down').fence]))).toBe(tokens[4]);
  });

  it('fails with LockRedisError naming the missing quorum when 3 of 5 masters are down', async () => {
    node(2).kill();
    node(3).kill();
    await Promise.all([node(2).exited, node(3).exited]);
    node(4).pause();
    const e = engine();
    const error = await e.acquire('three-down', { waitMs: 5000 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockRedisError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(
      /RedLock could not reach a quorum .*only 2 of 5 nodes answered \(3 needed\)/,
    );
    // tryAcquire never reports "unreachable" as "busy".
    await expect(e.tryAcquire('three-down')).rejects.toBeInstanceOf(LockRedisError);
    // The two live nodes granted for a moment; the failed attempt released them again.
    expect(await onNode(0, ['EXISTS', keys.names('three-down').lock])).toBe(0);
    expect(await onNode(1, ['EXISTS', keys.names('three-down').lock])).toBe(0);
  });

  it('tells "busy" (a majority holds it for another owner) apart from "unreachable"', async () => {
    const holder = engine();
    const other = engine();
    const lock = await holder.acquire('busy', { leaseMs: 10_000 });
    expect(await other.tryAcquire('busy')).toBeNull();
    const error = await other.acquire('busy', { waitMs: 300 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(/still busy after waiting/);
    expect((error as LockNotAcquiredError).retryAfterMs).toBeGreaterThan(0);
    await lock.release();
  });

  it('reports a split vote as "no quorum" and releases its partial grant on every node', async () => {
    const names = keys.names('split');
    for (const i of [0, 1]) {
      await onNode(i, ['HSET', names.lock, 'owner', 'someone-else', 'fence', '1', 'hold', '1']);
      await onNode(i, ['PEXPIRE', names.lock, 30_000]);
    }
    node(4).pause();
    const error = await engine()
      .acquire('split', { waitMs: 1500 })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(
      /no quorum: 2 of 5 nodes granted, 2 busy, 1 did not answer \(3 needed\)/,
    );
    // Nodes 2 and 3 granted each time and were released each time; the other owner's keys are untouched.
    expect(await onNode(2, ['EXISTS', names.lock])).toBe(0);
    expect(await onNode(3, ['EXISTS', names.lock])).toBe(0);
    expect(await onNode(0, ['HGET', names.lock, 'owner'])).toBe('someone-else');
    expect(await onNode(1, ['HGET', names.lock, 'owner'])).toBe('someone-else');
  });

  it('keeps fencing tokens increasing across two different majorities', async () => {
    const names = keys.names('fence');
    // Node 0's counter runs far ahead (say its clock did): the first majority's token comes from it.
    const ahead = Date.now() * 1000 + 1e12;
    await onNode(0, ['SET', names.fence, String(ahead), 'PX', 86_400_000]);
    node(3).pause();
    node(4).pause();
    const e = engine();
    const first = await e.acquire('fence', { leaseMs: 10_000 }); // majority {0, 1, 2}
    expect(first.fencingToken).toBeGreaterThan(ahead);
    // The grant wrote its token back: node 2, shared with every other majority, now starts above it.
    expect(Number(await onNode(2, ['GET', names.fence]))).toBe(first.fencingToken);
    expect(await first.release()).toBe(true);
    node(3).resume();
    node(4).resume();
    node(0).pause();
    node(1).pause();
    const second = await e.acquire('fence', { leaseMs: 10_000 }); // majority {2, 3, 4}
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await second.release()).toBe(true);
    recordFigures('redlock', 'fencing across majorities', {
      firstMajority: '{0,1,2}',
      secondMajority: '{2,3,4}',
      firstToken: first.fencingToken,
      secondToken: second.fencingToken,
    });
  });

  it('re-enters with the same owner on every node and releases hold by hold', async () => {
    const e = engine();
    const names = keys.names('reentrant');
    await e.using('reentrant', { leaseMs: 10_000 }, async (outer) => {
      const inner = await e.acquire('reentrant');
      expect(inner.fencingToken).toBe(outer.fencingToken);
      // owner, fence, the hold count and two holds on every node
      await expectOnEveryNode(['HLEN', names.lock], 5);
      await expectOnEveryNode(['HGET', names.lock, 'n'], '2');
      expect(await inner.release()).toBe(true);
      await expectOnEveryNode(['HLEN', names.lock], 4);
      await expectOnEveryNode(['HGET', names.lock, 'n'], '1');
    });
    await expectOnEveryNode(['EXISTS', names.lock], 0);
  });

  it('wakes a waiter by pub/sub from the live nodes while a minority is down', async () => {
    // Backoff polling is pushed beyond waitMs: only a release message can wake the waiter in time.
    const holder = engine();
    const waiter = engine({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const lock = await holder.acquire('wake');
    node(0).kill();
    await node(0).exited;
    const waiting = waiter.acquire('wake', { waitMs: 30_000 });
    await waitUntil(() => waiter.stats().channels === 1, { description: 'the waiter to subscribe' });
    await sleep(200); // let the subscriptions on the live nodes confirm
    expect(await lock.release()).toBe(true);
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
    await next.release();
  });

  it('lets a second holder in when a node restarts without persistence at once, and not after a delayed restart', async () => {
    const a = engine();
    const b = engine();
    // Immediate restart: the lock lived on {0, 1, 2}; node 2 comes back empty, 3 and 4 come back.
    node(3).kill();
    node(4).kill();
    await Promise.all([node(3).exited, node(4).exited]);
    const first = await a.acquire('restart', { leaseMs: 30_000 });
    await sleep(2000); // the attempts queued for the dead nodes 3 and 4 time out (and are undone)
    await node(2).restart();
    await Promise.all([node(3).restart(), node(4).restart()]);
    // (acquire, not tryAcquire: the clients need a moment to reconnect to the restarted nodes)
    const intruder = await b.acquire('restart', { leaseMs: 30_000, waitMs: 10_000 }).catch(() => null);
    // The hazard the Redis docs describe, reproduced: a second grant while the first lease lasts. The
    // first holder is told: its engine checks its locks when a node's connection comes back, and finds
    // fewer than a majority holding this one.
    expect(intruder).not.toBeNull();
    await waitUntil(() => first.signal.aborted, { timeoutMs: 10_000, description: 'the first holder told' });
    // 'reset' when the check ran before the second grant, 'taken-over' when it found that grant.
    expect(['reset', 'taken-over']).toContain((first.signal.reason as LockLostError).reason);

    // Delayed restart: node 2 stays down until the first holder's lease has run out.
    node(3).kill();
    node(4).kill();
    await Promise.all([node(3).exited, node(4).exited]);
    const second = await a.acquire('delayed', { leaseMs: 8000 });
    await sleep(1500);
    node(2).kill();
    await node(2).exited;
    await Promise.all([node(3).restart(), node(4).restart()]);
    // While the first lease lasts, every definite answer must be "busy" (unreachable is retried).
    let refusals = 0;
    let delayedIntruder: LockHandle | null = null;
    while (second.isHeld && !delayedIntruder) {
      try {
        delayedIntruder = await b.tryAcquire('delayed', { leaseMs: 20_000 });
        if (!delayedIntruder) refusals++;
      } catch (err) {
        if (!(err instanceof LockRedisError)) throw err;
      }
      await sleep(100);
    }
    const delayedDoubleHolder = delayedIntruder !== null && second.isHeld;
    await waitUntil(() => second.signal.aborted, {
      timeoutMs: 20_000,
      description: 'the first lease to end',
    });
    await node(2).restart();
    const after = delayedIntruder ?? (await b.acquire('delayed', { leaseMs: 20_000, waitMs: 10_000 }));
    recordFigures('redlock', 'restart without persistence', {
      immediateRestartSecondGrant: intruder !== null,
      delayedRestartDoubleHolder: delayedDoubleHolder,
      delayedRestartRefusals: refusals,
    });
    expect(delayedDoubleHolder).toBe(false);
    expect(refusals).toBeGreaterThan(0);
    expect(after.fencingToken).toBeGreaterThan(second.fencingToken);
    await Promise.all([first.release(), intruder?.release(), after.release()]);
  });

  it('refuses lock kinds that do not compose by majority, with a clear error', async () => {
    const e = engine();
    await expect(e.acquire('kinds', { limit: 2 })).rejects.toThrow(
      /"limit" option is not supported with RedLock/,
    );
    await expect(e.acquire('kinds', { fair: true })).rejects.toThrow(TypeError);
  });

  it('validates the redlock option before connecting', () => {
    expect(() => createLockEngine({ redlock: [] })).toThrow(RangeError);
    expect(() => createLockEngine({ redlock: ['redis://127.0.0.1:1', 'redis://localhost:1'] })).toThrow(
      /same Redis server/,
    );
    expect(() => createLockEngine({ redlock: ['http://x'] })).toThrow(/redlock\[0\] must be a redis:\/\//);
    expect(() => createLockEngine({ redis: group.urls[0], redlock: group.urls })).toThrow(
      /either "redis".*or "redlock"/,
    );
    expect(() => createLockEngine({ redlock: group.urls, replicas: {} })).toThrow(
      /"replicas" \(WAIT\) does not apply/,
    );
    expect(() => createLockEngine({ redlock: { nodes: group.urls, nodeTimeoutMs: 0 } })).toThrow(RangeError);
    expect(() => createLockEngine({ redlock: { nodes: group.urls, typo: 1 } as never })).toThrow(
      /Unknown option "typo"/,
    );
  });
});
