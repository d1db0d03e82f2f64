/*
 * Redis Cluster: 3 masters + 3 replicas (real redis-server processes), one cluster and one
 * fencing-oracle server for the whole file. The failover test kills a master, so it runs last.
 */
import { Cluster } from 'ioredis';
import { createLockEngine, LockEngine, LockHandle } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { hasShardedPubSub } from '../../lib/core/topology/cluster-pubsub';
import { DEFAULT_COHORT_BOUNDS } from '../../lib/core/options/lock-options';
import { defineScript } from '../../lib/core/redis/script-library';
import type { CreateLockEngineOptions } from '../../lib/core';
import { keySlot } from '../support/cluster-slots';
import { redisCommand } from '../support/redis-command';
import { startCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import type { WorkerProcess } from '../support/spawn-worker';
import { sleep, waitUntil } from '../support/wait';
import { FenceOracle } from '../support/fence-oracle';
import { expectFailoverUnderLoad } from '../support/failover-under-load';
import {
  expectBaselineRound,
  type LockWorkerMessage,
  spawnLockWorkers,
  stopLockWorkers,
} from '../support/topology-workers';

jest.setTimeout(180_000);

const PREFIX = 'topo:'; // the workers' prefix
const keys = new KeySpace(PREFIX);

let cluster: RedisClusterTopology;
let oracleServer: RedisServerProcess;
let oracle: FenceOracle;
let workers: WorkerProcess<LockWorkerMessage>[] = [];
let engines: LockEngine[] = [];
let clients: Cluster[] = [];

/** An engine on its own ioredis Cluster client (both closed after each test). */
function engine(options: Partial<CreateLockEngineOptions> = {}): LockEngine {
  const client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 3 } });
  client.on('error', () => undefined);
  clients.push(client);
  const e = createLockEngine({ redis: client, keyPrefix: PREFIX, ...options });
  engines.push(e);
  return e;
}

/** A user key whose lock lives in `slot` (found by search; keys of one lock share the stem's slot). */
function keyInSlot(slot: number, base: string): string {
  for (let i = 0; ; i++) if (keySlot(keys.stem(`${base}${i}`)) === slot) return `${base}${i}`;
}

const nodeId = async (node: RedisServerProcess) => String(await redisCommand(node.port, ['CLUSTER', 'MYID']));

beforeAll(async () => {
  [cluster, oracleServer] = await Promise.all([
    startCluster({ masters: 3, replicasPerMaster: 1 }),
    startRedis(),
  ]);
  oracle = new FenceOracle(oracleServer.url);
  workers = await spawnLockWorkers(3, {
    topology: { kind: 'cluster', startupNodes: cluster.startupNodes },
    oracleUrl: oracleServer.url,
    callers: 2,
    holdMs: 2,
  });
});

afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  clients.forEach((c) => c.disconnect());
  engines = [];
  clients = [];
});

afterAll(async () => {
  await stopLockWorkers(workers);
  await oracle?.close();
  await Promise.all([cluster?.stop(), oracleServer?.stop()]);
});

describe('Redis Cluster (3 masters + 3 replicas)', () => {
  it('keeps every key of one lock in one slot, whatever the user key contains, for every kind', async () => {
    const nasty = [
      'plain',
      'a{b}c',
      '{',
      '}',
      '{}',
      '}{',
      'x}{y',
      '{a}{b}',
      '%7B',
      'emoji 🔒 {tag}',
      'sp ace',
    ];
    for (const key of nasty) {
      for (const tag of ['m', 'rw', 'fair', 'sem'] as const) {
        const n = keys.names(key, tag);
        const slots = new Set([n.lock, n.fence, n.channel, n.aux].map((name) => keySlot(name)));
        expect(slots.size).toBe(1);
      }
    }
    // And the real cluster agrees: every kind's scripts run without CROSSSLOT.
    const e = engine();
    for (const key of nasty) {
      for (const options of [
        {},
        { reentrant: false },
        { mode: 'write' as const },
        { mode: 'read' as const },
        { fair: true },
        { limit: 2 },
      ]) {
        const lock = await e.acquire(key, { ...options, waitMs: 5000 });
        expect(await lock.release()).toBe(true);
      }
    }
  });

  it('wakes waiters with sharded pub/sub, subscribed on the master that owns the lock slot', async () => {
    const holder = engine();
    // Backoff polling is pushed beyond waitMs and the holder's lease: only a message can wake it.
    const waiter = engine({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const lock = await holder.acquire('sharded');
    const waiting = waiter.acquire('sharded', { waitMs: 20_000 });
    waiting.catch(() => undefined); // awaited below; a failed assertion first must not leave it unhandled
    const channel = keys.names('sharded').channel;
    const owner = await cluster.masterForKey(channel);
    await waitUntil(
      async () =>
        ((await redisCommand(owner.port, ['PUBSUB', 'SHARDNUMSUB', channel])) as unknown[])[1] === 1,
      {
        description: 'an SSUBSCRIBE on the slot owner',
      },
    );
    for (const master of await cluster.masters()) {
      expect(await redisCommand(master.port, ['PUBSUB', 'NUMSUB', channel])).toEqual([channel, 0]); // no classic subscription
    }
    expect(await lock.release()).toBe(true);
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
    await next.release();
  });

  it('uses SPUBLISH only on servers that have sharded pub/sub (Redis 7+), PUBLISH before', () => {
    expect(hasShardedPubSub('# Server\r\nredis_version:7.0.15\r\nredis_mode:cluster\r\n')).toBe(true);
    expect(hasShardedPubSub('# Server\r\nredis_version:6.2.14\r\n')).toBe(false);
    expect(hasShardedPubSub('')).toBe(false);
  });

  it("waits for the slot master's replica (WAIT) when replica acknowledgements are asked for", async () => {
    const e = engine({ replicas: { count: 1, timeoutMs: 2000 } });
    const lock = await e.acquire('cluster-acked', { leaseMs: 10_000 });
    expect(lock.replicaAcks).toBe(1); // every master has one replica
    await lock.release();
  });

  it('keeps mutual exclusion and strictly increasing tokens across 3 OS processes', async () => {
    await expectBaselineRound(workers, oracle, 'cluster', {
      scope: 'cl-baseline',
      grants: 200,
      figures: 'baseline: 3 processes x 2 callers',
    });
  });

  it('keeps a held lock, its fencing counter and its waiters through resharding of the lock slot', async () => {
    const key = 'resharded';
    const names = keys.names(key);
    const slot = keySlot(names.lock);
    const source = await cluster.masterForSlot(slot);
    const target = (await cluster.masters()).find((m) => m !== source)!;
    const [sourceId, targetId] = await Promise.all([nodeId(source), nodeId(target)]);
    const holderEngine = engine({ watchdogLeaseMs: 3000, renewEveryMs: 1000 }); // renewals run during the move
    const lock = await holderEngine.acquire(key);
    const waiter = engine();
    const waiting = waiter.acquire(key, { waitMs: 60_000 });
    waiting.catch(() => undefined);

    await redisCommand(target.port, ['CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId]);
    await redisCommand(source.port, ['CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId]);
    // Mid-migration a new lock in the slot gets ASK, then TRYAGAIN (its script has two keys, and
    // Redis refuses multi-key writes of keys that do not exist yet while the slot moves); the
    // gateway retries until the move is done.
    const fresh = keyInSlot(slot, 'fresh-');
    const freshAcquire = engine().acquire(fresh, { leaseMs: 10_000 });
    freshAcquire.catch(() => undefined);
    await sleep(300);
    for (;;) {
      const batch = (await redisCommand(source.port, ['CLUSTER', 'GETKEYSINSLOT', slot, 100])) as string[];
      if (batch.length === 0) break;
      await redisCommand(source.port, ['MIGRATE', target.host, target.port, '', 0, 5000, 'KEYS', ...batch]);
    }
    await redisCommand(target.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', targetId]);
    await redisCommand(source.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', targetId]);
    for (const m of await cluster.masters()) {
      if (m !== source && m !== target)
        await redisCommand(m.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', targetId]);
    }
    await waitUntil(async () => (await cluster.masterForSlot(slot)) === target, {
      description: 'the slot to move',
    });
    const freshLock = await freshAcquire;
    expect(await redisCommand(target.port, ['EXISTS', keys.names(fresh).lock])).toBe(1);
    expect(await freshLock.release()).toBe(true);

    // The lock, its fencing counter and the waiter's subscription are on the new owner now.
    // One hold: the string '<owner> <hold id> <token>' (mutex-acquire.lua).
    expect(String(await redisCommand(target.port, ['GET', names.lock]))).toMatch(
      new RegExp(`^\\S+ \\S+ ${lock.fencingToken}`),
    );
    // The counter ends the block of tokens the grant reserved for local hand-offs (cohorts).
    expect(Number(await redisCommand(target.port, ['GET', names.fence])) - lock.fencingToken).toBe(
      DEFAULT_COHORT_BOUNDS.passes,
    );
    await waitUntil(
      async () =>
        ((await redisCommand(target.port, ['PUBSUB', 'SHARDNUMSUB', names.channel])) as unknown[])[1] === 1,
      {
        timeoutMs: 20_000,
        description: 'the waiter to re-subscribe on the new owner',
      },
    );
    await lock.extend(); // MOVED is followed
    await sleep(2500); // two watchdog rounds against the new owner
    expect(lock.isHeld).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    expect(await lock.release()).toBe(true);
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
    expect(await next.release()).toBe(true);
  });

  it('survives killing the master of the lock slot under load: progress resumes, tokens never regress', async () => {
    const key = 'failover';
    const slot = keySlot(keys.stem(key));
    const victim = await cluster.masterForSlot(slot);
    // The replica that will be promoted has no cached scripts: the first EVALSHA there gets
    // NOSCRIPT and the gateway must reload by EVAL.
    const victimId = await nodeId(victim);
    const heir = (await cluster.clusterNodes()).find((n) => n.masterId === victimId)!;
    await redisCommand(heir.port, ['SCRIPT', 'FLUSH']);
    expect(await redisCommand(heir.port, ['SCRIPT', 'EXISTS', defineScript('mutex-acquire').sha])).toEqual([
      0,
    ]);
    // A holder and a waiter on another lock in the same slot: the waiter's subscription must follow.
    const side = keyInSlot(slot, 'side-');
    const holderEngine = engine({ watchdogLeaseMs: 120_000, renewEveryMs: 40_000 });
    const sideLock: LockHandle = await holderEngine.acquire(side);
    const waiter = engine({ backoff: { initialMs: 120_000, maxMs: 120_000 } });
    // Neither its backoff nor the holder's lease (120 s) ends before waitMs: only a message wakes it.
    const sideWaiting = waiter.acquire(side, { waitMs: 90_000 });
    sideWaiting.catch(() => undefined);
    await waitUntil(() => waiter.stats().channels === 1, { description: 'the side waiter to subscribe' });

    await expectFailoverUnderLoad({
      workers,
      oracle,
      scope: 'cl-failover',
      key,
      victim,
      promoted: () =>
        waitUntil(async () => (await cluster.masterForSlot(slot)) !== victim, {
          timeoutMs: 60_000,
          intervalMs: 100,
          description: 'a replica to take over the slot',
        }),
      figures: { file: 'cluster', name: 'failover under load: master of the slot killed' },
    });

    // The wake-up reaches the waiter through the promoted master.
    expect(await sideLock.release()).toBe(true);
    const next = await sideWaiting;
    expect(next.fencingToken).toBeGreaterThan(sideLock.fencingToken);
    await next.release();
  });
});
