import { Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { closeClient, listClients, redisClient } from '../support/redis-assertions';
import { sharedRedisGroup, type RedisGroup } from '../support/redis-topologies';
import { waitUntil } from '../support/wait';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';

@Injectable()
class Payouts {
  constructor(private readonly locks: DistributedLockService) {}

  @DistributedLock({ key: 'payout:{0}' })
  async pay(_account: string): Promise<{ key?: string; token?: number }> {
    const lock = this.locks.current();
    return { key: lock?.key, token: lock?.fencingToken };
  }
}

let group: RedisGroup;
let probes: Redis[];

const clientCounts = () => Promise.all(probes.map(async (p) => (await listClients(p)).length));

beforeAll(async () => {
  group = await sharedRedisGroup();
  probes = group.urls.map((url) => redisClient(url));
});

afterAll(async () => {
  await Promise.all((probes ?? []).map((p) => closeClient(p)));
});

describe('DistributedLockModule.forRoot({ redlock })', () => {
  it('passes RedLock nodes to the engine: decorated calls lock on a majority, close() disconnects them', async () => {
    const before = await clientCounts();
    const keyPrefix = uniquePrefix('redlock');
    const app = await startApp({
      imports: [DistributedLockModule.forRoot({ redlock: { nodes: group.urls }, keyPrefix })],
      providers: [Payouts],
    });
    try {
      await expect(app.get(Payouts).pay('acct-1')).resolves.toEqual({
        key: 'payout:acct-1',
        token: expect.any(Number),
      });
      // Each master that granted keeps its own fence counter: a majority of them at least (a slow
      // node may miss its short RedLock timeout on a loaded machine, which the quorum tolerates).
      const fenced = await Promise.all(probes.map((p) => p.exists(`${keyPrefix}{payout:acct-1}:fence`)));
      expect(fenced.filter((n) => n === 1).length).toBeGreaterThanOrEqual(2);
      // Nodes given as URLs: the engine PINGs them itself (a majority must answer).
      await expect(app.get(DistributedLockService).health()).resolves.toMatchObject({
        status: 'up',
        redis: expect.any(Number),
      });
    } finally {
      await closeApps(app);
    }
    await waitUntil(async () => JSON.stringify(await clientCounts()) === JSON.stringify(before), {
      description: 'RedLock connections closed',
    });
  });

  it('pings RedLock nodes passed in as clients, and leaves them open', async () => {
    const nodes = group.urls.map((url) => redisClient(url));
    try {
      const app = await startApp({
        imports: [DistributedLockModule.forRoot({ redlock: nodes, keyPrefix: uniquePrefix('redlock-own') })],
        providers: [Payouts],
      });
      try {
        await expect(app.get(Payouts).pay('acct-2')).resolves.toMatchObject({ key: 'payout:acct-2' });
        const health = await app.get(DistributedLockService).health();
        expect(health).toMatchObject({ status: 'up', held: 0 });
        expect(health.redis).toEqual(expect.any(Number));
      } finally {
        await closeApps(app);
      }
      for (const node of nodes) expect(await node.ping()).toBe('PONG');
    } finally {
      await Promise.all(nodes.map((n) => closeClient(n)));
    }
  });
});
