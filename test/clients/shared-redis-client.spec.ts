/*
 * docs/MIGRATION.md's `forRootAsync` that reuses the Redis client another module provides: the connection of
 * @nestjs-modules/ioredis (its token, the one `@InjectRedis()` injects). The lock module locks on that client,
 * and app.close() releases a lock still held although that module quits its client on shutdown too. Outside
 * test/nest/: the Nest 12 run of those specs does not have @nestjs-modules/ioredis.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getRedisConnectionToken, InjectRedis, RedisModule } from '@nestjs-modules/ioredis';
import type Redis from 'ioredis';
import { DistributedLockModule, DistributedLockService } from '../../lib';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { uniquePrefix } from '../support/nest-env';

let server: RedisServerProcess;
let probe: Redis;
const prefix = uniquePrefix('shared');

/** A service of the app that already uses the connection. */
@Injectable()
class CouponStore {
  constructor(@InjectRedis() readonly redis: Redis) {}
}

@Module({ providers: [CouponStore], exports: [CouponStore] })
class CouponModule {}

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
});

afterAll(async () => {
  if (probe) await closeClient(probe);
  await server?.stop();
});

describe('forRootAsync with the client of @nestjs-modules/ioredis', () => {
  it('locks on that client, and releases what it holds at close', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisModule.forRoot({ type: 'single', url: server.url }),
        DistributedLockModule.forRootAsync({
          inject: [getRedisConnectionToken()],
          useFactory: (redis: Redis) => ({ redis, keyPrefix: prefix }),
        }),
        CouponModule,
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const store = app.get(CouponStore);
    const locks = app.get(DistributedLockService);

    expect(await store.redis.ping()).toBe('PONG'); // the app's own use of the connection
    const lock = await locks.acquire('coupon:42');
    expect(lock.fencingToken).toBeGreaterThan(0);
    expect(await locks.isLocked('coupon:42')).toBe(true);
    expect((await probe.keys(`${prefix}*`)).filter((key) => !key.endsWith(':fence')).length).toBeGreaterThan(
      0,
    );

    await app.close(); // the lock is still held: close() releases it
    // Nothing left but the key's fencing counter (kept so that tokens keep rising).
    expect((await probe.keys(`${prefix}*`)).filter((key) => !key.endsWith(':fence'))).toEqual([]);
  });
});
