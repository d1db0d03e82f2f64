import { Injectable, Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type Redis from 'ioredis';
import {
  DistributedLockModule,
  DistributedLockModuleOptions,
  DistributedLockOptionsFactory,
  DistributedLockService,
} from '../../lib';
import { closeClient, listClients, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';

let server: RedisServerProcess;
let probe: Redis;

/** A stand-in for the app's configuration (like @nestjs/config's ConfigService). */
@Injectable()
class AppConfig {
  prefix = uniquePrefix('async');
  get redisUrl(): string {
    return server.url;
  }
}

@Module({ providers: [AppConfig], exports: [AppConfig] })
class AppConfigModule {}

@Injectable()
class LockOptionsFactory implements DistributedLockOptionsFactory {
  constructor(private readonly config: AppConfig) {}
  createDistributedLockOptions(): DistributedLockModuleOptions {
    return { redis: this.config.redisUrl, keyPrefix: this.config.prefix };
  }
}

@Module({ imports: [AppConfigModule], providers: [LockOptionsFactory], exports: [LockOptionsFactory] })
class LockOptionsModule {}

/** A feature module that injects the lock service without importing DistributedLockModule. */
@Injectable()
class FeatureService {
  constructor(readonly locks: DistributedLockService) {}
}
@Module({ providers: [FeatureService], exports: [FeatureService] })
class FeatureModule {}

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
});

afterAll(async () => {
  if (probe) await closeClient(probe);
  await server?.stop();
});

/** Locks once through the app's service and checks the lock sat under the configured prefix. */
async function expectWorkingLocks(
  app: INestApplication,
  service = app.get(DistributedLockService),
): Promise<void> {
  const prefix = app.get(AppConfig).prefix;
  const seen = await service.using('answer', {}, async (lock) => ({
    token: lock.fencingToken,
    inRedis: await probe.exists(`${prefix}{answer}:m`),
  }));
  expect(seen.token).toBeGreaterThan(0);
  expect(seen.inRedis).toBe(1);
}

describe('DistributedLockModule.forRootAsync()', () => {
  it('builds the options with useFactory, inject and imports', async () => {
    const app = await startApp({
      imports: [
        DistributedLockModule.forRootAsync({
          imports: [AppConfigModule],
          inject: [AppConfig],
          useFactory: async (config: AppConfig) => ({ redis: config.redisUrl, keyPrefix: config.prefix }),
        }),
        AppConfigModule,
      ],
    });
    try {
      await expectWorkingLocks(app);
    } finally {
      await closeApps(app);
    }
  });

  it('builds the options with useClass', async () => {
    const app = await startApp({
      imports: [
        DistributedLockModule.forRootAsync({ imports: [AppConfigModule], useClass: LockOptionsFactory }),
        AppConfigModule,
      ],
    });
    try {
      await expectWorkingLocks(app);
    } finally {
      await closeApps(app);
    }
  });

  it('builds the options with useExisting', async () => {
    const app = await startApp({
      imports: [
        DistributedLockModule.forRootAsync({ imports: [LockOptionsModule], useExisting: LockOptionsFactory }),
        AppConfigModule,
      ],
    });
    try {
      await expectWorkingLocks(app);
    } finally {
      await closeApps(app);
    }
  });
});

describe('isGlobal', () => {
  it('is global by default: forRoot() and forRootAsync() reach modules that do not import them', async () => {
    const [sync, async] = [uniquePrefix('global'), uniquePrefix('global-async')];
    for (const [prefix, lockModule] of [
      [sync, DistributedLockModule.forRoot({ redis: server.url, keyPrefix: sync })],
      [
        async,
        DistributedLockModule.forRootAsync({ useFactory: () => ({ redis: server.url, keyPrefix: async }) }),
      ],
    ] as const) {
      const app = await startApp({ imports: [FeatureModule, lockModule] });
      try {
        const locks = app.get(FeatureService).locks;
        expect(locks).toBe(app.get(DistributedLockService));
        const inRedis = await locks.using('answer', {}, () => probe.exists(`${prefix}{answer}:m`));
        expect(inRedis).toBe(1);
      } finally {
        await closeApps(app);
      }
    }
  });

  it('provides the lock service to modules that do not import DistributedLockModule', async () => {
    const app = await startApp({
      imports: [
        AppConfigModule,
        FeatureModule,
        DistributedLockModule.forRootAsync({
          isGlobal: true,
          imports: [AppConfigModule],
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ redis: config.redisUrl, keyPrefix: config.prefix }),
        }),
      ],
    });
    try {
      await expectWorkingLocks(app, app.get(FeatureService).locks);
    } finally {
      await closeApps(app);
    }
  });

  it('keeps the module private to its importers without it, and a failed start-up opens no connection', async () => {
    const before = (await listClients(probe)).length;
    const compiling = Test.createTestingModule({
      imports: [FeatureModule, DistributedLockModule.forRoot({ redis: server.url, isGlobal: false })],
    }).compile();
    await expect(compiling).rejects.toThrow(/can't resolve dependencies of the FeatureService/);
    expect((await listClients(probe)).length).toBe(before);
  });
});

describe('module options checked at start-up', () => {
  it.each<[string, Record<string, unknown>, ErrorConstructor, RegExp]>([
    ['no connection', { redis: undefined }, TypeError, /needs a "redis" option/],
    ['an unknown option', { waitMs: 5 }, TypeError, /Unknown option "waitMs"/],
    ['a bad default', { defaults: { waitMs: -1 } }, RangeError, /defaults\.waitMs must be at least 0/],
    ['a bad lease', { watchdogLeaseMs: 1.5 }, RangeError, /watchdogLeaseMs must be a whole number/],
    ['a braced prefix', { keyPrefix: 'a{b}' }, TypeError, /keyPrefix must not contain/],
    [
      'a success status as busyStatus',
      { busyStatus: 200 },
      RangeError,
      /busyStatus must be an HTTP error status/,
    ],
    [
      'a string retryAfter',
      { retryAfter: 'soon' },
      TypeError,
      /retryAfter must be a boolean, a number of seconds or a function/,
    ],
    [
      'a non-URL string',
      { redis: 'localhost:6379' },
      TypeError,
      /redis must be a redis:\/\/ or rediss:\/\/ URL/,
    ],
    [
      'both redis and redlock',
      { redlock: ['redis://127.0.0.1:1'] },
      TypeError,
      /either "redis" .* or "redlock"/,
    ],
    [
      'an empty redlock',
      { redis: undefined, redlock: [] },
      RangeError,
      /redlock needs at least one Redis master/,
    ],
    [
      'a bad replicas option',
      { replicas: { count: 0 } },
      RangeError,
      /replicas\.count must be a whole number/,
    ],
  ])('refuses %s before connecting', async (_name, options, errorClass, message) => {
    const before = (await listClients(probe)).length;
    const redis = 'redis' in options ? {} : { redis: server.url };
    const compiling = Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ ...redis, ...options } as DistributedLockModuleOptions)],
    }).compile();
    await expect(compiling).rejects.toBeInstanceOf(errorClass);
    await expect(compiling).rejects.toThrow(message);
    expect((await listClients(probe)).length).toBe(before);
  });

  it('refuses forRootAsync() without useFactory, useClass or useExisting, naming the three', () => {
    const message = /forRootAsync\(\) needs one of useFactory, useClass or useExisting/;
    expect(() => DistributedLockModule.forRootAsync({})).toThrow(TypeError);
    expect(() => DistributedLockModule.forRootAsync({})).toThrow(message);
    expect(() =>
      DistributedLockModule.forRootAsync({ imports: [AppConfigModule], inject: [AppConfig] }),
    ).toThrow(message);
  });

  it('refuses bad options from an async factory too', async () => {
    const compiling = Test.createTestingModule({
      imports: [
        DistributedLockModule.forRootAsync({
          useFactory: () => ({ redis: server.url, commandTimeoutMs: 0 }),
        }),
      ],
    }).compile();
    await expect(compiling).rejects.toThrow(/commandTimeoutMs must be at least 1/);
  });
});
