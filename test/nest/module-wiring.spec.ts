/*
 * Issue 36: how a feature module reaches the lock service. DistributedLockTestingModule.forRoot() is
 * global by default, like DistributedLockModule.forRoot(), so it replaces that one at the root of a test
 * and feature modules that import nothing keep working (service, decorated route, health indicator).
 * `imports: [DistributedLockModule]` (the class, no forRoot()) re-exports a global forRoot() and, when
 * there is none, fails the start-up saying what to write instead of Nest's UnknownExportException; a
 * forRoot({ isGlobal: false }) imported into the feature module, directly or through a shared module
 * that re-exports it, works.
 */
import {
  Controller,
  Get,
  Injectable,
  Module,
  Param,
  type DynamicModule,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import type Redis from 'ioredis';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { DistributedLockTestingControls, DistributedLockTestingModule } from '../../lib/testing';
import { DistributedLockHealthIndicator, DistributedLockHealthModule } from '../../lib/terminus';
import { closeClient, listClients, redisClient } from '../support/redis-assertions';
import { uniquePrefix, useNestEnv } from '../support/nest-env';

@Injectable()
class OrdersService {
  constructor(readonly locks: DistributedLockService) {}
}

@Controller('orders')
class OrdersController {
  @Get(':id')
  @DistributedLock({ key: 'order:{0}', waitMs: 0 })
  async show(@Param('id') id: string) {
    return { id };
  }
}

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: DistributedLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy()]);
  }
}

/** A feature module named FeatureModule (Nest names modules by class) with the given imports. */
function featureModule(
  imports: (Type | DynamicModule)[] = [],
  parts: { providers?: Type[]; controllers?: Type[] } = {},
): Type {
  @Module({
    imports,
    providers: parts.providers ?? [OrdersService],
    controllers: parts.controllers ?? [OrdersController],
  })
  class FeatureModule {}
  return FeatureModule;
}

/** Compiles and initialises an app on Express, closing it when the start-up fails. */
async function start(imports: (Type | DynamicModule)[]): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

/** The start-up error of an app built from `imports` (compile() or init()). */
async function startUpError(imports: (Type | DynamicModule)[]): Promise<Error> {
  const outcome: INestApplication | Error = await start(imports).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error)),
  );
  if (!(outcome instanceof Error)) {
    await outcome.close();
    throw new Error('the app started');
  }
  return outcome;
}

/** GET /orders/7 answers 200; 423 while OrdersService's lock service holds order:7; 200 again after. */
async function expectRouteLockedBy(app: INestApplication): Promise<void> {
  const http = () => request(app.getHttpServer()).get('/orders/7');
  await http().expect(200, { id: '7' });
  const held = await app.get(OrdersService).locks.acquire('order:7');
  try {
    const busy = await http();
    expect(busy.status).toBe(423);
  } finally {
    await held.release();
  }
  await http().expect(200, { id: '7' });
}

const env = useNestEnv();
let probe: Redis;
beforeAll(() => {
  probe = redisClient(env.url);
});
afterAll(async () => {
  if (probe) await closeClient(probe);
});

const scopedFixes = (feature: string) =>
  'Either register DistributedLockModule.forRoot(...) (or forRootAsync(...)) once in the root module without ' +
  'isGlobal: false (it is global by default) and no other module needs to import it; or import the module ' +
  `forRoot(...) returns into ${feature} (imports: [DistributedLockModule.forRoot({ ..., isGlobal: false })]), ` +
  'or into a shared module that lists DistributedLockModule in its exports, and import that module into ' +
  `${feature}. In a test, DistributedLockTestingModule.forRoot() stands in for DistributedLockModule.forRoot().`;

describe('DistributedLockTestingModule.forRoot() at the root, feature modules importing nothing', () => {
  it('is global by default: injected service, decorated route (200, 423 while held) and health indicator', async () => {
    const app = await start([
      DistributedLockTestingModule.forRoot(),
      featureModule([DistributedLockHealthModule], {
        controllers: [OrdersController, HealthController],
      }),
    ]);
    try {
      // One service for the whole app: the one the testing module provides, on its in-memory engine.
      expect(app.get(OrdersService).locks).toBe(app.get(DistributedLockService));
      await expectRouteLockedBy(app);
      // Held elsewhere through the testing controls: the route's lock is the testing module's engine.
      const controls = app.get(DistributedLockTestingControls);
      await controls.holdElsewhere('order:7');
      expect((await request(app.getHttpServer()).get('/orders/7')).status).toBe(423);
      await controls.releaseElsewhere('order:7');
      const health = await request(app.getHttpServer()).get('/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', info: { 'distributed-lock': { status: 'up' } } });
    } finally {
      await app.close();
    }
  });

  it('with isGlobal: false, fails the start-up of a decorated controller naming its module and the fix', async () => {
    const error = await startUpError([
      DistributedLockTestingModule.forRoot({ isGlobal: false }),
      featureModule([], { providers: [] }),
    ]);
    expect(error.message).toBe(
      'nestjs-distributed-lock: @DistributedLock() on OrdersController.show: no DistributedLockService is ' +
        'visible from FeatureModule, so these methods could not lock. ' +
        scopedFixes('FeatureModule'),
    );
  });

  it('with isGlobal: false, an injected service gets Nest’s error naming DistributedLockService and the module', async () => {
    // Nothing of the library is imported by FeatureModule here: the error is Nest's own, and it says
    // which token is missing where; the import it suggests, `imports: [DistributedLockModule]`, then
    // gets the library's message (next describe).
    const error = await startUpError([
      DistributedLockTestingModule.forRoot({ isGlobal: false }),
      featureModule(),
    ]);
    expect(error.message).toMatch(
      /can't resolve dependencies of the OrdersService \(\?\)[\s\S]*DistributedLockService at index \[0\] is available in the FeatureModule/,
    );
  });
});

describe('imports: [DistributedLockModule] without forRoot()', () => {
  it('behind forRoot({ isGlobal: false }) at the root, fails the start-up saying what to write', async () => {
    const before = (await listClients(probe)).length;
    const error = await startUpError([
      DistributedLockModule.forRoot({ redis: env.url, keyPrefix: uniquePrefix('bare'), isGlobal: false }),
      featureModule([DistributedLockModule]),
    ]);
    expect(error.message).toBe(
      'nestjs-distributed-lock: FeatureModule imports DistributedLockModule without forRoot(). The bare class ' +
        'provides nothing by itself: it only re-exports the lock service of a global forRoot(), and the ' +
        'forRoot() module imported by RootTestModule is registered with isGlobal: false, so only the ' +
        'modules that import it see it. ' +
        scopedFixes('FeatureModule'),
    );
    expect(error.message).not.toMatch(/UnknownExport|Symbol\(/);
    // The root's engine was built but never connected.
    expect((await listClients(probe)).length).toBe(before);
  });

  it('with no forRoot() in the app, says so', async () => {
    const error = await startUpError([featureModule([DistributedLockModule])]);
    expect(error.message).toBe(
      'nestjs-distributed-lock: FeatureModule imports DistributedLockModule without forRoot(). The bare class ' +
        'provides nothing by itself: it only re-exports the lock service of a global forRoot(), and the app ' +
        'registers no DistributedLockModule.forRoot() (nor DistributedLockTestingModule.forRoot()). ' +
        scopedFixes('FeatureModule'),
    );
  });

  it('names every module that imports it, and DistributedLockTestingModule alone the same way', async () => {
    @Module({ imports: [DistributedLockModule] })
    class BillingModule {}
    const error = await startUpError([featureModule([DistributedLockModule]), BillingModule]);
    expect(error.message).toMatch(
      /^nestjs-distributed-lock: FeatureModule, BillingModule import DistributedLockModule without forRoot\(\)\. /,
    );
    const testing = await startUpError([
      DistributedLockTestingModule.forRoot({ isGlobal: false }),
      featureModule([DistributedLockTestingModule]),
    ]);
    expect(testing.message).toMatch(
      /^nestjs-distributed-lock: FeatureModule imports DistributedLockTestingModule without forRoot\(\)\. .* registered with isGlobal: false/,
    );
  });

  it('re-exports a global forRoot(): the same service, locking on its Redis', async () => {
    const prefix = uniquePrefix('bare-global');
    const app = await start([
      DistributedLockModule.forRoot({ redis: env.url, keyPrefix: prefix }),
      featureModule([DistributedLockModule]),
    ]);
    try {
      expect(app.get(OrdersService).locks).toBe(app.get(DistributedLockService));
      await expectRouteLockedBy(app);
    } finally {
      await app.close();
    }
  });
});

describe('forRoot({ isGlobal: false }) imported where it is used', () => {
  it('works imported into the feature module directly, locking on its Redis', async () => {
    const prefix = uniquePrefix('scoped');
    const app = await start([
      featureModule([DistributedLockModule.forRoot({ redis: env.url, keyPrefix: prefix, isGlobal: false })]),
    ]);
    try {
      await expectRouteLockedBy(app);
      const held = await app.get(OrdersService).locks.acquire('order:8');
      try {
        // The feature module's lock is in this Redis, under its prefix.
        expect(await probe.exists(`${prefix}{order:8}:m`)).toBe(1);
      } finally {
        await held.release();
      }
    } finally {
      await app.close();
    }
  });

  it('works through a shared module that exports DistributedLockModule', async () => {
    @Module({
      imports: [
        DistributedLockModule.forRoot({ redis: env.url, keyPrefix: uniquePrefix('shared'), isGlobal: false }),
      ],
      exports: [DistributedLockModule],
    })
    class LocksModule {}
    const app = await start([featureModule([LocksModule])]);
    try {
      await expectRouteLockedBy(app);
    } finally {
      await app.close();
    }
  });
});
