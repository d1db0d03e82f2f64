import { Controller, Param, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import type { Cluster } from 'ioredis';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { keySlot } from '../support/cluster-slots';
import { clusterClient, closeClient } from '../support/redis-assertions';
import { sharedCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { closeApps, startApp } from '../support/nest-env';

const PREFIX = 'cluster-test:';

@Controller('carts')
class CartController {
  constructor(private readonly locks: DistributedLockService) {}

  @Post(':cart/checkout')
  @DistributedLock({ key: 'cart:{0}', waitMs: 5_000 })
  async checkout(@Param('cart') cart: string) {
    const lock = this.locks.current();
    return { cart, key: lock?.key, token: lock?.fencingToken };
  }
}

let cluster: RedisClusterTopology;
let client: Cluster;
let app: INestApplication;

beforeAll(async () => {
  cluster = await sharedCluster();
  client = clusterClient(cluster.startupNodes);
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: client, keyPrefix: PREFIX })],
    controllers: [CartController],
  });
}, 120_000);

afterAll(async () => {
  await closeApps(app);
  if (client) await closeClient(client);
});

// Without encoding, "}x" would make the tag empty ("prefix{}x}") and scatter lock and fence across slots.
describe.each(['}{evil}{', '}x', '{}', 'a{b}c', 'plain'])(
  'a Cluster with user text %j in the key',
  (cart) => {
    it('locks and releases without CROSSSLOT, with lock and fence in one slot', async () => {
      const res = await request(app.getHttpServer())
        .post(`/carts/${encodeURIComponent(cart)}/checkout`)
        .expect(201);
      expect(res.body).toMatchObject({ cart, key: `cart:${cart}` });
      expect(res.body.token).toBeGreaterThan(0);
      const stem = `${PREFIX}{cart:${cart.replace(/[{}]/g, (c) => (c === '{' ? '%7B' : '%7D'))}}`;
      expect(keySlot(`${stem}:m`)).toBe(keySlot(`${stem}:fence`));
      expect(await client.exists(`${stem}:fence`)).toBe(1);
      expect(await client.exists(`${stem}:m`)).toBe(0);
    });
  },
);
