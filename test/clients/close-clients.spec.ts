/*
 * close() with a node-redis client (v6 and v5), whether Redis is there or not. node-redis queues
 * commands while Redis is away and its connect() retries until it reaches it, so nothing of the
 * engine's close may wait on either: close() used to hang for good after a failed call with Redis
 * down (found by a new user's first try). The user's client, even one passed unconnected that the
 * library connected, stays open: its user closes it. A hang here fails by the test's timeout: no
 * wall-clock bound is asserted.
 */
import { createLockEngine } from '../../lib/core/public';
import { LockRedisError } from '../../lib';
import { ClientFactory, type Family } from '../support/client-families';
import { getFreePort } from '../support/free-port';
import { trackNewResources } from '../support/new-resources';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { sharedCluster } from '../support/redis-topologies';
import { nextEvent, track } from '../support/lock-env';

type NodeRedis = {
  isOpen: boolean;
  connect(): Promise<unknown>;
  ping(): Promise<string>;
  destroy(): void;
};

describe.each(['node-redis6', 'node-redis5'] as Family[])('close() with a %s client', (family) => {
  let factory: ClientFactory;
  let server: RedisServerProcess | undefined;

  beforeEach(() => {
    factory = new ClientFactory(family);
  });

  afterEach(async () => {
    await factory.closeClients();
    await server?.stop();
    server = undefined;
  });

  it('ends with Redis unreachable, and leaves no timer or socket once the user closed their client', async () => {
    const created = trackNewResources();
    try {
      const client = factory.sync(`redis://127.0.0.1:${await getFreePort()}`) as NodeRedis; // nothing listens
      const engine = createLockEngine({ redis: client as never, keyPrefix: 'cc:' });
      for (const waitMs of [0, 300]) {
        await expect(engine.tryAcquire('down', { waitMs })).rejects.toBeInstanceOf(LockRedisError);
      }
      await engine.close();
      expect(client.isOpen).toBe(true); // connected by the library, still the user's to close
      client.destroy(); // as its user would (a polite close() would wait for Redis to come back)
      expect(await created.ended()).toEqual([]); // no reconnect loop, timer or socket left
    } finally {
      created.stop();
    }
  });

  it('leaves open a client passed connected, and ends after Redis went away', async () => {
    server = await startRedis();
    const client = factory.sync(server.url) as NodeRedis;
    await client.connect();
    const engine = createLockEngine({ redis: client as never, keyPrefix: 'cc:' });
    const waited = await engine.acquire('up');
    // A waiter: the library's own subscriber connection opens beside the user's client.
    await expect(engine.tryAcquire('up', { waitMs: 200 })).resolves.toBeNull();
    await waited.release();
    await server.stop();
    server = undefined;
    await expect(engine.tryAcquire('gone', { waitMs: 0 })).rejects.toBeInstanceOf(LockRedisError);
    await expect(engine.tryAcquire('gone', { waitMs: 0 })).rejects.toBeInstanceOf(LockRedisError);
    await engine.close();
    expect(client.isOpen).toBe(true); // the user's: reconnecting, theirs to close
    client.destroy(); // as its user would (a polite close() would wait for Redis to come back)
  });

  it('opens no connection after close(): a waiter that was subscribing when it closed leaves nothing', async () => {
    // On a Cluster the wake-up subscriber (a duplicate of the client) connects on a waiter's first
    // SUBSCRIBE and opens its shards' pub/sub connections on demand: a SUBSCRIBE sent after close()
    // would open them again, with nothing left to close them.
    const cluster = await sharedCluster();
    const created = trackNewResources();
    try {
      const client = await factory.cluster(cluster.startupNodes);
      const engine = createLockEngine({ redis: client as never, keyPrefix: 'cc:' });
      const holder = createLockEngine({ redis: client as never, keyPrefix: 'cc:' });
      const held = await holder.acquire('subscribing');
      const busy = nextEvent(engine, 'contended', (e) => e.key === 'subscribing');
      const waiter = track(engine.acquire('subscribing', { waitMs: 60_000 }));
      await busy; // its subscriber is connecting now
      await engine.close();
      await waiter.result.catch(() => undefined);
      await held.release();
      await holder.close();
      await factory.close(client);
      expect(await created.ended()).toEqual([]); // no socket or timer of its own left
    } finally {
      created.stop();
    }
  });

  it('leaves open the client it connected and a client passed connected, both usable', async () => {
    server = await startRedis();
    const passedUnconnected = factory.sync(server.url) as NodeRedis;
    const passedConnected = factory.sync(server.url) as NodeRedis;
    await passedConnected.connect();
    for (const client of [passedUnconnected, passedConnected]) {
      const engine = createLockEngine({ redis: client as never, keyPrefix: 'cc:' });
      await expect(engine.using('k', {}, (lock) => lock.fencingToken)).resolves.toBeGreaterThan(0);
      await engine.close();
    }
    for (const client of [passedUnconnected, passedConnected]) {
      expect(client.isOpen).toBe(true);
      await expect(client.ping()).resolves.toBe('PONG');
    }
  });
});

describe.each(['ioredis', 'iovalkey', 'node-redis6', 'node-redis5'] as Family[])(
  'engines made and closed on one %s client',
  (family) => {
    let factory: ClientFactory;
    let server: RedisServerProcess;

    beforeAll(async () => {
      server = await startRedis();
      factory = new ClientFactory(family);
    });

    afterAll(async () => {
      await factory.closeClients();
      await server.stop();
    });

    it('leave no listener of theirs on it: the twelfth engine sets off no MaxListenersExceededWarning', async () => {
      const client = (await factory.standalone(server.url)) as {
        eventNames(): (string | symbol)[];
        listenerCount(event: string | symbol): number;
      };
      const listeners = (): Record<string, number> =>
        Object.fromEntries(client.eventNames().map((e) => [String(e), client.listenerCount(e)]));
      const before = listeners();
      for (let i = 0; i < 12; i++) {
        const engine = createLockEngine({ redis: client as never, keyPrefix: 'cc:' });
        // A waiter too: the wake-up subscriber is made (a duplicate connection of the client).
        const held = await engine.acquire('shared');
        await expect(engine.tryAcquire('shared', { waitMs: 50 })).resolves.toBeNull();
        await held.release();
        await engine.close();
      }
      expect(listeners()).toEqual(before);
    });
  },
);
