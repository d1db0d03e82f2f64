/*
 * Two Nest apps in one process, each with its own Redis: a decorated method locks on the Redis of
 * the app that created its object — class providers, useFactory providers, whichever app was
 * created last — and an app whose feature module cannot see a DistributedLockService fails at
 * start-up with a message naming that module, instead of locking on the other app's Redis.
 */
import { DynamicModule, INestApplication, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { DistributedLock, DistributedLockModule } from '../../lib';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, uniquePrefix } from '../support/nest-env';

/** Calls `inside` while holding `stock:<item>`. */
@Injectable()
class StockService {
  @DistributedLock({ key: 'stock:{0}' })
  async reserve(_item: string, inside: () => Promise<void>): Promise<void> {
    await inside();
  }
}

/** Declares StockService and imports nothing: it sees a lock service only through a global module. */
@Module({ providers: [StockService], exports: [StockService] })
class FeatureModule {}

/** The shared-module pattern: one forRoot, re-exported to every feature that imports it. */
function locksModule(redis: string, keyPrefix: string): DynamicModule {
  const forRoot = DistributedLockModule.forRoot({ redis, keyPrefix });
  return { module: LocksModule, imports: [forRoot], exports: [forRoot] };
}
@Module({})
class LocksModule {}

/** A feature that imports the shared locks module. */
function wiredFeature(locks: DynamicModule): DynamicModule {
  return {
    module: WiredFeatureModule,
    imports: [locks],
    providers: [StockService, { provide: 'FACTORY_STOCK', useFactory: () => new StockService() }],
    exports: [StockService, 'FACTORY_STOCK'],
  };
}
@Module({})
class WiredFeatureModule {}

let redisA: RedisServerProcess;
let redisB: RedisServerProcess;
let adminA: Redis;
let adminB: Redis;
const prefix = uniquePrefix('two-apps');

beforeAll(async () => {
  [redisA, redisB] = await Promise.all([startRedis(), startRedis()]);
  adminA = new Redis(redisA.url);
  adminB = new Redis(redisB.url);
});

afterAll(async () => {
  adminA?.disconnect();
  adminB?.disconnect();
  await Promise.all([redisA?.stop(), redisB?.stop()]);
});

async function start(imports: DynamicModule[]): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** Which servers hold a key of `item`'s lock while the decorated method runs. */
async function serversHolding(stock: StockService, item: string): Promise<string[]> {
  let seen: string[] = [];
  await stock.reserve(item, async () => {
    const [onA, onB] = await Promise.all([adminA.keys(`*${item}*`), adminB.keys(`*${item}*`)]);
    seen = [...(onA.length > 0 ? ['A'] : []), ...(onB.length > 0 ? ['B'] : [])];
  });
  return seen;
}

describe('two apps in one process, each with its own Redis', () => {
  it("locks each app's keys on its own server, whichever app was created last", async () => {
    const appA = await start([wiredFeature(locksModule(redisA.url, prefix))]);
    const appB = await start([wiredFeature(locksModule(redisB.url, prefix))]);
    try {
      expect(await serversHolding(appA.get(StockService), 'apple')).toEqual(['A']);
      expect(await serversHolding(appB.get(StockService), 'banana')).toEqual(['B']);
      // Instances Nest did not build through their class (useFactory) are bound at start-up.
      expect(await serversHolding(appA.get('FACTORY_STOCK'), 'cherry')).toEqual(['A']);
      expect(await serversHolding(appB.get('FACTORY_STOCK'), 'damson')).toEqual(['B']);
    } finally {
      await closeApps(appA, appB);
    }
    // What stays (the fencing counters, kept for fenceTtlMs) is on each app's own server only.
    const items = async (admin: Redis) =>
      (await admin.keys(`${prefix}*`)).map((k) => /stock:(\w+)/.exec(k)?.[1]).sort();
    expect(await items(adminA)).toEqual(['apple', 'cherry']);
    expect(await items(adminB)).toEqual(['banana', 'damson']);
  });

  it('fails the start-up of an app whose feature module sees no lock service, naming the module', async () => {
    const good = await start([wiredFeature(locksModule(redisA.url, prefix))]);
    try {
      // The lock module is imported by the root module only and is not global (isGlobal: false):
      // FeatureModule cannot see it. Before, its StockService silently locked on the other app's Redis.
      const moduleRef = await Test.createTestingModule({
        imports: [
          DistributedLockModule.forRoot({ redis: redisB.url, keyPrefix: prefix, isGlobal: false }),
          FeatureModule,
        ],
      }).compile();
      const broken = moduleRef.createNestApplication({ logger: false });
      const init = broken.init();
      await expect(init).rejects.toThrow(
        'nestjs-distributed-lock: @DistributedLock() on StockService.reserve: no DistributedLockService is ' +
          'visible from FeatureModule, so these methods could not lock. Either register ' +
          'DistributedLockModule.forRoot(...) (or forRootAsync(...)) once in the root module without ' +
          'isGlobal: false (it is global by default) and no other module needs to import it; or import the ' +
          'module forRoot(...) returns into FeatureModule (imports: [DistributedLockModule.forRoot({ ..., ' +
          'isGlobal: false })]), or into a shared module that lists DistributedLockModule in its exports, and ' +
          'import that module into FeatureModule. In a test, DistributedLockTestingModule.forRoot() stands in ' +
          'for DistributedLockModule.forRoot().',
      );
      await broken.close().catch(() => undefined);
      // The same feature module works with a bare forRoot() (global by default).
      const fixed = await start([
        DistributedLockModule.forRoot({ redis: redisB.url, keyPrefix: prefix }),
        FeatureModule as unknown as DynamicModule,
      ]);
      try {
        expect(await serversHolding(fixed.get(StockService), 'elder')).toEqual(['B']);
      } finally {
        await closeApps(fixed);
      }
    } finally {
      await closeApps(good);
    }
  });
});
