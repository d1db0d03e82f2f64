/*
 * A Redis Cluster failover on every client family: 3 masters + 3 replicas; per family a grant
 * acknowledged by a replica (WAIT, sent by the door to the master of the lock's slot), then that
 * master is SIGKILLed. Once the replica is promoted and the client follows, the same lock is granted
 * again with a larger fencing token (the fence counter reached the replica with the grant).
 */
import { createLockEngine } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import { keySlot } from '../support/cluster-slots';
import { startCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { ClientFactory, FAMILIES } from '../support/client-families';

/**
 * Every family, in one Cluster: each kills the master of its own lock's slot and restarts it (as a
 * replica of the promoted one) before the next family starts, even when its expectations fail.
 */
const FAILOVER_FAMILIES = FAMILIES;

jest.setTimeout(180_000);

const PREFIX = 'cfo:';
const keys = new KeySpace(PREFIX);
let cluster: RedisClusterTopology;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicasPerMaster: 1 });
});

afterAll(async () => {
  await cluster?.stop();
});

describe.each(FAILOVER_FAMILIES)('Cluster failover on %s', (family) => {
  const clients = new ClientFactory(family);
  const engines: LockEngine[] = [];

  afterAll(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
    await clients.closeClients();
  });

  it('grants the lock again on the promoted replica with a larger token', async () => {
    const key = `failover-${family}`;
    const redis = await clients.cluster(cluster.startupNodes);
    const acked = createLockEngine({
      keyPrefix: PREFIX,
      redis: redis as never,
      replicas: { count: 1, timeoutMs: 2000, policy: 'require' },
    });
    const plain = createLockEngine({ keyPrefix: PREFIX, redis: redis as never });
    engines.push(acked, plain);
    await cluster.waitUntilHealthy();
    const before = await acked.acquire(key);
    expect(before.replicaAcks).toBe(1);
    expect(await before.release()).toBe(true);

    const victim = await cluster.masterForSlot(keySlot(keys.stem(key)));
    victim.kill('SIGKILL');
    try {
      let after: LockHandle | undefined;
      for (let i = 0; i < 120 && !after; i++) {
        after = await plain.acquire(key, { waitMs: 1000 }).catch(() => undefined);
      }
      expect(after).toBeDefined();
      expect(after!.fencingToken).toBeGreaterThan(before.fencingToken);
      expect(await after!.release()).toBe(true);
    } finally {
      // Whatever happened above: the next family's shard must have its replica back (a shard left
      // without one made the next family's WAIT see 0 acks, blamed on that family).
      await victim.restart();
      await cluster.waitUntilHealthy();
    }
  });
});
