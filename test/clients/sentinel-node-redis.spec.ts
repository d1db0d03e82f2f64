/*
 * Sentinel through node-redis' createSentinel (v6 and v5): 1 master + 2 replicas + 3 sentinels
 * (real processes). The shared behaviour suite with every engine on a RedisSentinel client, a
 * waiter woken by the release message, WAIT replica acks, and a real failover (the master
 * SIGKILLed): locking resumes on the promoted master, with tokens above the ones before it.
 *
 * @slow six server processes, the behaviour suite twice and a failover (~45 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import { nextEvent, track } from '../support/lock-env';
import { startSentinel, waitForReplicaLink, type RedisSentinelTopology } from '../support/redis-topologies';
import { describeLockBehaviour } from '../testing/behaviour/describe-lock-behaviour';
import { ClientFactory, type Family } from '../support/client-families';
import { enginesOnConnectedClients } from '../support/connected-clients';

jest.setTimeout(120_000);

const PREFIX = 'cs:';
let group: RedisSentinelTopology;

beforeAll(async () => {
  group = await startSentinel({ replicas: 2, sentinels: 3 });
});

afterAll(async () => {
  await group?.stop();
});

/** Engines on RedisSentinel clients of one family, the first 6 of a test connected ahead (connected-clients.ts). */
function sentinelEnv(family: Family) {
  const clients = new ClientFactory(family);
  return enginesOnConnectedClients(
    {
      connected: () => clients.sentinel(group.masterName, group.sentinelAddresses),
      unconnected: () => clients.syncSentinel(group.masterName, group.sentinelAddresses),
      close: (client) => clients.close(client),
      reusable: (client) => clients.isReady(client),
      closeClients: () => clients.closeClients(),
    },
    6,
    PREFIX,
  );
}

describe.each(['node-redis6', 'node-redis5'] as const)('Sentinel through %s', (family) => {
  describeLockBehaviour(`a Sentinel-managed master through ${family}`, async () => {
    const env = sentinelEnv(family);
    await env.start();
    return { engine: (o) => env.engine(o), closeEngines: () => env.closeEngines(), stop: () => env.stop() };
  });

  describe('wake-ups, replica acks', () => {
    const env = sentinelEnv(family);
    beforeAll(() => env.start());
    afterEach(() => env.closeEngines());
    afterAll(() => env.stop());

    it('wakes a waiter by the release message', async () => {
      const slow = { backoff: { initialMs: 60_000, maxMs: 60_000 }, watchdogLeaseMs: 600_000 };
      const holderEngine = env.engine(slow);
      const waiterEngine = env.engine(slow);
      const key = `wake-${family}`;
      const holder = await holderEngine.acquire(key);
      let contended = 0;
      waiterEngine.events.on('contended', (e) => e.key === key && contended++);
      const attempts: number[] = [];
      waiterEngine.events.on('acquired', (e) => e.key === key && attempts.push(e.attempts));
      const secondBusy = nextEvent(waiterEngine, 'contended', () => contended === 2);
      const waiter = track(waiterEngine.acquire(key, { waitMs: 600_000 }));
      await secondBusy;
      expect(await holder.release()).toBe(true);
      const handle = await waiter.result;
      expect(attempts).toEqual([3]);
      expect(await handle.release()).toBe(true);
    });

    it('reports WAIT acknowledgements from both replicas', async () => {
      const engine = env.engine({ replicas: { count: 2, timeoutMs: 2000, policy: 'require' } });
      const handle = await engine.acquire(`acked-${family}`);
      expect(handle.replicaAcks).toBe(2);
      expect(await handle.release()).toBe(true);
    });
  });
});

describe('failover through node-redis 6', () => {
  const env = sentinelEnv('node-redis6');
  beforeAll(() => env.start());
  afterAll(() => env.stop());

  it('resumes locking on the promoted master, tokens above the ones before', async () => {
    // Grants acknowledged by both replicas (WAIT): the fence survives the master's death.
    const engine = env.engine({ replicas: { count: 2, timeoutMs: 2000, policy: 'require' } });
    await Promise.all(group.replicas.map((r) => waitForReplicaLink(r)));
    const before = await engine.acquire('failover');
    const token = before.fencingToken;
    expect(await before.release()).toBe(true);
    const old = await group.currentMaster();
    const victim = group.serverByPort(old.port)!;
    victim.kill('SIGKILL');
    await group.waitForFailover(old.port, 60_000);
    // Calls during the failover ride it out (retried until their deadline) or fail clearly; once
    // node-redis follows the new master, they succeed.
    const plain = env.engine();
    let after: LockHandle | undefined;
    for (let i = 0; i < 60 && !after; i++) {
      after = await plain.acquire('failover', { waitMs: 2000 }).catch(() => undefined);
    }
    expect(after).toBeDefined();
    expect(after!.fencingToken).toBeGreaterThan(token);
    expect(await after!.release()).toBe(true);
    await victim.restart();
  });
});
