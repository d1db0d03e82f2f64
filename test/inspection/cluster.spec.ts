/*
 * Inspection on a Redis Cluster (3 masters): list() finds the locks of another process on every
 * node, and a force release reaches the holder's process through its notice channel (a plain SUBSCRIBE).
 */
import { Cluster } from 'ioredis';
import { createLockEngine, type LockEngine } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { keySlot } from '../support/cluster-slots';
import { redisCommand } from '../support/redis-command';
import { sharedCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { spawnWorker, workerPath, type WorkerProcess } from '../support/spawn-worker';
import { waitUntil } from '../support/wait';
import { runCliProcess } from '../support/run-cli';

jest.setTimeout(180_000);

const PREFIX = 'cinsp:';
const keys = new KeySpace(PREFIX);
let cluster: RedisClusterTopology;
let client: Cluster | undefined;
let engine: LockEngine | undefined;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  cluster = await sharedCluster();
});

afterAll(async () => {
  await worker?.stop();
  await engine?.close();
  client?.disconnect();
});

/** A user key whose lock lives in `slot` or just after it. */
function keyNearSlot(slot: number, base: string): string {
  for (let i = 0; ; i++) {
    const key = `${base}${i}`;
    const s = keySlot(keys.stem(key));
    if (s >= slot && s < slot + 2000) return key;
  }
}

describe('inspection on a Redis Cluster', () => {
  it('lists the locks held on every node and force-releases across nodes', async () => {
    const ports = cluster.startupNodes.map((n) => n.port);
    worker = spawnWorker(workerPath('holder-worker.ts'), {
      env: { CLUSTER_NODES: ports.join(','), KEY_PREFIX: PREFIX, APP: 'cluster-replica' },
    });
    const { pid } = await worker.waitForMessage((m) => m.type === 'ready', 60_000);
    // One lock in each third of the slots: the three masters each hold one.
    const lockKeys = [0, 6000, 12000].map((slot, i) => keyNearSlot(slot, `c${i}-`));
    const tokens: number[] = [];
    for (const [i, key] of lockKeys.entries()) {
      worker.send({ type: 'acquire', id: `k${i}`, key });
      tokens.push(
        (await worker.waitForMessage((m) => m.type === 'granted' && m.id === `k${i}`, 30_000)).token,
      );
    }
    const holdingNodes = await Promise.all(
      lockKeys.map(async (key) => {
        // A node that does not serve the slot answers MOVED.
        const owners = await Promise.all(
          ports.map((p) => redisCommand(p, ['EXISTS', keys.names(key).lock]).catch(() => 0)),
        );
        return owners.findIndex((n) => n === 1);
      }),
    );
    expect(new Set(holdingNodes).size).toBe(3); // one lock per master

    client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 3 } });
    client.on('error', () => undefined);
    engine = createLockEngine({ redis: client, keyPrefix: PREFIX });
    const listed = await waitUntil(
      async () => {
        const { locks } = await engine!.list();
        return locks.length === 3 && locks;
      },
      { timeoutMs: 30_000, description: 'the three locks listed' },
    );
    expect(listed.map((l) => [l.key, l.holders[0]!.owner.pid, l.holders[0]!.fencingToken])).toEqual(
      lockKeys.map((key, i) => [key, pid, tokens[i]]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
    );

    const cli = await runCliProcess([
      'list',
      '--json',
      '--cluster',
      '--redis',
      ports.map((p) => `redis://127.0.0.1:${p}`).join(','),
      '--prefix',
      PREFIX,
    ]);
    expect(cli.code).toBe(0);
    expect((JSON.parse(cli.stdout) as { locks: unknown[] }).locks).toHaveLength(3);

    for (const [i, key] of lockKeys.entries()) {
      expect(await engine.forceRelease(key, { reason: `node ${holdingNodes[i]} drill` })).toBe(true);
      const lost = await worker.waitForMessage((m) => m.type === 'lost' && m.id === `k${i}`, 30_000);
      expect(lost.reason).toBe('force-released');
      const next = await engine.acquire(key, { waitMs: 10_000 });
      expect(next.fencingToken).toBeGreaterThan(tokens[i]!);
      expect(next.signal.aborted).toBe(false);
      await next.release();
    }
    const audit = await engine.forceReleases();
    expect(audit.map((a) => a.key).sort()).toEqual([...lockKeys].sort());
    expect(audit.every((a) => a.evicted[0]!.owner.pid === pid)).toBe(true);
  });
});
