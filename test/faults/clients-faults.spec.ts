/*
 * The faults that matter per client family (ioredis, node-redis 6 and 5, iovalkey, GLIDE), each
 * engine on a client the test passed in, one redis-server per family:
 * - SCRIPT FLUSH between two calls: the next call reloads the script (EVAL after NOSCRIPT), no error;
 * - every connection killed (CLIENT KILL TYPE normal/pubsub): commands work again once the client
 *   reconnects, and the wake-up subscription comes back (a waiter is still woken by the message);
 * - Redis frozen (SIGSTOP): a call settles on its own within its bound, with a typed error, while
 *   Redis stays frozen; after SIGCONT locking works again.
 * Failover per family: test/clients/sentinel-node-redis.spec.ts (Sentinel) and
 * test/faults/clients-cluster-failover.spec.ts (Cluster).
 */
import { createLockEngine, LockError } from '../../lib/core';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { nextEvent, track } from '../support/lock-env';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import { ClientFactory, FAMILIES } from '../support/client-families';

jest.setTimeout(120_000);

const PREFIX = 'cf:';
const NO_POLLING = {
  keyPrefix: PREFIX,
  backoff: { initialMs: 60_000, maxMs: 60_000 },
  watchdogLeaseMs: 600_000,
};

describe.each(FAMILIES)('faults on %s', (family) => {
  let server: RedisServerProcess;
  let admin: ReturnType<typeof redisClient>;
  const clients = new ClientFactory(family);
  let engines: LockEngine[] = [];

  beforeAll(async () => {
    server = await startRedis();
    admin = redisClient(server.url);
  });
  afterEach(async () => {
    if (server.paused) server.resume();
    await Promise.all(engines.splice(0).map((e) => e.close()));
    await clients.closeClients();
    engines = [];
  });
  afterAll(async () => {
    await closeClient(admin);
    await server?.stop();
  });

  async function engine(options: object = {}): Promise<LockEngine> {
    const redis = await clients.standalone(server.url);
    const e = createLockEngine({ keyPrefix: PREFIX, ...options, redis: redis as never });
    engines.push(e);
    return e;
  }

  it('reloads the scripts after SCRIPT FLUSH between two calls', async () => {
    const e = await engine();
    const first = await e.acquire('flush');
    await admin.script('FLUSH');
    await first.extend(30_000);
    await admin.script('FLUSH');
    expect(await first.release()).toBe(true);
    await admin.script('FLUSH');
    const second = await e.acquire('flush', { reentrant: false });
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    await admin.script('FLUSH');
    expect(await second.release()).toBe(true);
    expect(await admin.exists(`${PREFIX}{flush}:m`)).toBe(0);
  });

  it('works again after every connection is killed, and the wake-up subscription comes back', async () => {
    const holderEngine = await engine(NO_POLLING);
    const waiterEngine = await engine(NO_POLLING);
    const key = `killed-${family}`;
    const holder = await holderEngine.acquire(key);
    let contended = 0;
    waiterEngine.events.on('contended', (e) => e.key === key && contended++);
    const secondBusy = nextEvent(waiterEngine, 'contended', () => contended === 2);
    const waiter = track(waiterEngine.acquire(key, { waitMs: 600_000 }));
    await secondBusy;
    const channel = `${PREFIX}{${key}}:m:ch`;

    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    // The subscriber reconnects and subscribes again (ioredis: the hub; node-redis, GLIDE: themselves).
    await waitUntil(
      async () => Number(((await admin.pubsub('NUMSUB', channel)) as [string, number])[1]) >= 1,
      { timeoutMs: 30_000, intervalMs: 50, description: `${channel} subscribed again` },
    );
    // The holder's connection comes back too, but its first command may still meet the dead one
    // (GLIDE finds out on sending): release() then resolves false, never throws, with a 'failed'
    // released event, and the engine sends the release again in the background until Redis answers.
    const outcomes: string[] = [];
    holderEngine.events.on('released', (e) => e.key === key && outcomes.push(e.result));
    const released = await holder.release();
    expect(outcomes[0]).toBe(released ? 'released' : 'failed');
    await waitUntil(() => outcomes.includes('released'), {
      timeoutMs: 30_000,
      intervalMs: 50,
      description: "the holder's release reaching Redis",
    });
    expect(outcomes.filter((o) => o !== 'failed')).toEqual(['released']);
    const handle = await waiter.result;
    expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(await handle.release()).toBe(true);
  });

  it('settles a call on its own while Redis is frozen, and locks again after SIGCONT', async () => {
    const e = await engine({ commandTimeoutMs: 1000 });
    const warm = await e.acquire('frozen-warm');
    await warm.release();
    server.pause();
    const outcome = await e.acquire('frozen', { waitMs: 300 }).then(
      () => 'granted',
      (err: unknown) => err,
    );
    expect(server.paused).toBe(true); // it settled before Redis came back
    expect(outcome).toBeInstanceOf(LockError);
    server.resume();
    let handle: Awaited<ReturnType<LockEngine['acquire']>> | undefined;
    for (let i = 0; i < 50 && !handle; i++) {
      handle = await e.acquire('frozen', { waitMs: 1000 }).catch(() => undefined);
    }
    expect(handle).toBeDefined();
    expect(await handle!.release()).toBe(true);
  });
});
