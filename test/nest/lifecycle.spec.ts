import { Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import {
  DistributedLock,
  DistributedLockModule,
  DistributedLockService,
  LockError,
  LockNotAcquiredError,
} from '../../lib';
import { closeClient, listClients, pubsubChannels, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';
import { trackNewResources } from '../support/new-resources';

let server: RedisServerProcess;
let probe: Redis;

@Injectable()
class Worker {
  @DistributedLock({ key: 'work:{0}' })
  async work(id: string): Promise<string> {
    return id;
  }
}

/** Connections other than the probe's own. */
const otherClients = async () => (await listClients(probe)).map((c) => `${c.addr} ${c.name} ${c.cmd}`);

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
  await probe.ping();
});

afterAll(async () => {
  if (probe) await closeClient(probe);
  await server?.stop();
});

describe('app.close()', () => {
  it('releases held locks, fails waiters, unsubscribes and closes the connections it opened', async () => {
    const clientsBefore = await otherClients();
    const created = trackNewResources();
    const keyPrefix = uniquePrefix('close');
    const app = await startApp({
      imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix })],
    });
    const locks = app.get(DistributedLockService);

    const held = await locks.acquire('busy'); // watchdog lease: a renewal timer is running
    const waiter = locks.acquire('busy', { waitMs: 60_000 }).then(
      () => 'acquired',
      (error: unknown) => error,
    );
    // The waiter's wake-up channel (the registry's force-release notice channel may be subscribed too).
    await waitUntil(async () => (await pubsubChannels(probe)).some((c) => c.includes('{busy}')), {
      description: 'the waiter subscribed',
    });
    expect(locks.stats()).toMatchObject({ held: 1, watchdog: 1, waitingLocks: 1, channels: 1 });

    await app.close();

    const failed = await waiter;
    expect(failed).toBeInstanceOf(LockNotAcquiredError);
    expect(held.isHeld).toBe(false);
    expect(await probe.exists(`${keyPrefix}{busy}:m`)).toBe(0);
    expect(await pubsubChannels(probe)).toEqual([]);
    await waitUntil(async () => (await otherClients()).length === clientsBefore.length, {
      description: 'the module connections to go',
    });
    expect(await otherClients()).toEqual(clientsBefore);
    expect(await created.ended()).toEqual([]);
  });

  it('leaves a client passed in open, and closes only what the module opened', async () => {
    const own = new Redis(server.url);
    try {
      await own.client('SETNAME', 'users-own-client');
      const clientsBefore = await otherClients();
      const app = await startApp({
        imports: [DistributedLockModule.forRoot({ redis: own, keyPrefix: uniquePrefix('own') })],
        providers: [Worker],
      });
      const locks = app.get(DistributedLockService);
      const held = await locks.acquire('shared');
      const waiting = locks.acquire('shared', { waitMs: 60_000 }); // opens the subscriber connection
      await waitUntil(async () => (await otherClients()).length > clientsBefore.length, {
        description: 'subscriber up',
      });
      await held.release();
      await (await waiting).release();

      await closeApps(app);

      expect(own.status).toBe('ready');
      expect(await own.ping()).toBe('PONG');
      await waitUntil(async () => (await otherClients()).length === clientsBefore.length, {
        description: 'the subscriber connection to go',
      });
      expect((await listClients(probe)).some((c) => c.name === 'users-own-client')).toBe(true);
    } finally {
      await closeClient(own);
    }
  });

  it('makes later calls fail clearly instead of reconnecting', async () => {
    const app = await startApp({
      imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('after') })],
      providers: [Worker],
    });
    const locks = app.get(DistributedLockService);
    const worker = app.get(Worker);
    await expect(worker.work('1')).resolves.toBe('1');
    await app.close();
    await expect(locks.acquire('x')).rejects.toThrow(LockError);
    await expect(worker.work('2')).rejects.toThrow(/closed/);
    await expect(locks.health()).resolves.toMatchObject({ status: 'down', redis: null });
  });

  it('closes cleanly a module that was compiled but never initialised', async () => {
    const { Test } = await import('@nestjs/testing');
    const clientsBefore = await otherClients();
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('lazy') })],
    }).compile();
    const locks = moduleRef.get(DistributedLockService);
    // Used before init: it connects on first use…
    await expect(locks.using('lazy', {}, async (lock) => lock.fencingToken)).resolves.toBeGreaterThan(0);
    await moduleRef.close();
    // …and close() still closes that connection.
    await waitUntil(async () => (await otherClients()).length === clientsBefore.length, {
      description: 'connection closed',
    });
  });
});

describe('health()', () => {
  it('reports Redis round trip, held and waiting locks, and down while Redis does not answer', async () => {
    const frozen = await startRedis();
    const app = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: frozen.url,
          keyPrefix: uniquePrefix('health'),
          commandTimeoutMs: 2000,
        }),
      ],
    });
    try {
      const locks = app.get(DistributedLockService);
      const held = await locks.acquire('h', { leaseMs: 60_000 });
      const health = await locks.health();
      expect(health).toEqual({ status: 'up', redis: expect.any(Number), held: 1, waiting: 0 });
      expect(health.redis).toBeGreaterThanOrEqual(0);
      frozen.pause();
      try {
        await expect(locks.health()).resolves.toMatchObject({
          status: 'down',
          redis: null,
          held: 1,
          error: expect.any(String),
        });
      } finally {
        frozen.resume();
      }
      await waitUntil(async () => (await locks.health()).status === 'up', { description: 'health up again' });
      await held.release();
    } finally {
      await closeApps(app);
      await frozen.stop();
    }
  });
});
