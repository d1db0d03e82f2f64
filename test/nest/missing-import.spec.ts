/*
 * Issue 25 point 2: an app whose providers use @DistributedLock() but that never imports
 * DistributedLockModule fails app.init() naming class and method (not the first call at 3 a.m.);
 * a feature module's decorated provider works with a bare forRoot() in the root module; a decorated
 * class the app never instantiates, or one built with `new`, is not checked.
 */
import { Controller, Get, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { DistributedLock, DistributedLockModule } from '../../lib';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';

@Injectable()
class ReportJob implements OnApplicationBootstrap {
  booted = 0;

  onApplicationBootstrap(): void {
    this.booted++;
  }

  @DistributedLock({ key: 'report:{0}' })
  async run(day: string): Promise<string> {
    return `report ${day}`;
  }

  @DistributedLock({ key: 'purge' })
  async purge(): Promise<void> {}
}

@Controller('orders')
class OrdersController {
  @DistributedLock({ key: 'orders' })
  @Get()
  async list(): Promise<string[]> {
    return [];
  }
}

/** Decorated, but no module of the apps below declares it. */
@Injectable()
class NeverInstantiated {
  @DistributedLock({ key: 'never' })
  async run(): Promise<void> {}
}

@Module({ providers: [ReportJob], exports: [ReportJob] })
class JobsModule {}

let server: RedisServerProcess;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe('@DistributedLock() in an app that never imports DistributedLockModule', () => {
  it('fails app.init() naming the class and its decorated methods', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [JobsModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(
      '@DistributedLock() on ReportJob.run, ReportJob.purge: the app has no DistributedLockService for ' +
        'ReportJob, so these methods could not lock. Import DistributedLockModule.forRoot(...) (or ' +
        "forRootAsync(...)) in the app's root module.",
    );
    await app.close().catch(() => undefined);
  });

  it('fails for a controller too', async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [OrdersController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(/@DistributedLock\(\) on OrdersController\.list: /);
    await app.close().catch(() => undefined);
  });

  it('leaves an app alone that does not instantiate the decorated class, and objects built with new', async () => {
    const app = await startApp({ providers: [] });
    try {
      expect(new NeverInstantiated()).toBeInstanceOf(NeverInstantiated);
    } finally {
      await closeApps(app);
    }
  });
});

describe('@DistributedLock() in a feature module with a bare forRoot() in the root module', () => {
  it('locks, and keeps the class own onApplicationBootstrap', async () => {
    const prefix = uniquePrefix('feature');
    const app = await startApp({
      imports: [JobsModule, DistributedLockModule.forRoot({ redis: server.url, keyPrefix: prefix })],
      controllers: [OrdersController],
    });
    const admin = new Redis(server.url);
    try {
      const job = app.get(ReportJob);
      expect(job.booted).toBe(1);
      expect(await job.run('monday')).toBe('report monday');
      expect(await app.get(OrdersController).list()).toEqual([]);
      // The lock went through Redis: the fencing counter of the key is there.
      expect((await admin.keys(`${prefix}*report*`)).length).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
      await closeApps(app);
    }
  });
});
