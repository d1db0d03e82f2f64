/*
 * Redis Cluster (3 masters, real redis-server processes) on every client family: the shared
 * behaviour suite with every engine on a Cluster client of the family, and wake-ups by sharded
 * pub/sub (SSUBSCRIBE on the master of the lock's slot) for locks on each of the 3 masters — with
 * a 60 s backoff and a 10 min lease, only the release's message can end the wait in time. An
 * iovalkey Cluster (no sharded subscribers of its own) is the case this guards.
 *
 * @slow a Cluster and the behaviour suite for five client families (~20-30 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
import { KeySpace } from '../../lib/core/internal';
import { keySlot } from '../support/cluster-slots';
import { nextEvent, track } from '../support/lock-env';
import { startCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { describeLockBehaviour } from '../testing/behaviour/describe-lock-behaviour';
import { ClientFactory, FAMILIES, type Family } from '../support/client-families';
import { enginesOnConnectedClients } from '../support/connected-clients';

jest.setTimeout(120_000);

const PREFIX = 'cc:';
const keys = new KeySpace(PREFIX);
const NO_POLLING = {
  keyPrefix: PREFIX,
  backoff: { initialMs: 60_000, maxMs: 60_000 },
  watchdogLeaseMs: 600_000,
};

let cluster: RedisClusterTopology;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicasPerMaster: 0 });
});

afterAll(async () => {
  await cluster?.stop();
});

/**
 * Engines on Cluster clients of one family, connected ahead (connected-clients.ts): 3, the most engines a
 * behaviour test opens. A client the library connects itself has its own test below.
 */
function clusterEnv(family: Family) {
  const clients = new ClientFactory(family);
  return enginesOnConnectedClients(
    {
      connected: () => clients.cluster(cluster.startupNodes),
      unconnected: () => clients.syncCluster(cluster.startupNodes),
      close: (client) => clients.close(client),
      reusable: (client) => clients.isReady(client),
      closeClients: () => clients.closeClients(),
      // GLIDE engines share one client: it multiplexes.
      shared: family === 'glide' ? () => clients.cluster(cluster.startupNodes) : undefined,
    },
    3,
    PREFIX,
  );
}

/** A user key whose lock lives in `slot`'s range owner: one key per master. */
async function keyPerMaster(label: string): Promise<string[]> {
  const masters = await cluster.masters();
  const out: string[] = [];
  for (const master of masters) {
    for (let i = 0; ; i++) {
      const key = `${label}-${i}`;
      if ((await cluster.masterForSlot(keySlot(keys.stem(key)))).port === master.port) {
        out.push(key);
        break;
      }
    }
  }
  return out;
}

describe.each(FAMILIES)('Cluster on %s', (family) => {
  describeLockBehaviour(`a Redis Cluster through ${family}`, async () => {
    const env = clusterEnv(family);
    await env.start();
    return { engine: (o) => env.engine(o), closeEngines: () => env.closeEngines(), stop: () => env.stop() };
  });

  describe('wake-ups', () => {
    const env = clusterEnv(family);
    beforeAll(() => env.start());
    afterEach(() => env.closeEngines());
    afterAll(() => env.stop());

    // GLIDE clients only exist connected (createClient resolves once connected).
    if (family !== 'glide') {
      it('connects a Cluster client it was given before the client connected', async () => {
        const engine = env.engineOnUnconnectedClient();
        const handle = await engine.acquire(`unconnected-${family}`, { waitMs: 10_000 });
        expect(handle.fencingToken).toBeGreaterThan(0);
        expect(await handle.release()).toBe(true);
      });
    }

    it('wakes a waiter by the release message (SSUBSCRIBE) on every master', async () => {
      const holderEngine = env.engine(NO_POLLING);
      const waiterEngine = env.engine(NO_POLLING);
      for (const key of await keyPerMaster(`wake-${family}`)) {
        const holder = await holderEngine.acquire(key);
        let contended = 0;
        const onContended = (e: { key: string }) => e.key === key && contended++;
        waiterEngine.events.on('contended', onContended);
        const attempts: number[] = [];
        const onAcquired = (e: { key: string; attempts: number }) =>
          e.key === key && attempts.push(e.attempts);
        waiterEngine.events.on('acquired', onAcquired);
        const secondBusy = nextEvent(waiterEngine, 'contended', () => contended === 2);
        const waiter = track(waiterEngine.acquire(key, { waitMs: 600_000 }));
        await secondBusy;
        expect(waiter.settled).toBe(false);
        expect(await holder.release()).toBe(true);
        const handle = await waiter.result;
        expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
        expect(attempts).toEqual([3]);
        expect(await handle.release()).toBe(true);
        waiterEngine.events.off('contended', onContended);
        waiterEngine.events.off('acquired', onAcquired);
      }
    });
  });
});
