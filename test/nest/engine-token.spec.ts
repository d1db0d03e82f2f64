/*
 * One door: the service, the decorator and the HTTP mapping reach the engine only through the
 * DistributedLockEngine token, so a test replaces the engine there and every path uses the
 * replacement. The module points at a Redis that does not exist: nothing may try it.
 */
import { Controller, Injectable, Param, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DistributedLock,
  DistributedLockEngine,
  DistributedLockModule,
  DistributedLockService,
} from '../../lib';
import { createInMemoryLockEngine, LockTestingControls } from '../../lib/testing';

@Injectable()
class Jobs {
  @DistributedLock({ key: 'job:{0}', waitMs: 0 })
  async run(name: string): Promise<number> {
    return this.locks.current(`job:${name}`)!.fencingToken;
  }

  constructor(private readonly locks: DistributedLockService) {}
}

@Controller('jobs')
class JobsController {
  constructor(private readonly jobs: Jobs) {}

  @Post(':name')
  run(@Param('name') name: string): Promise<number> {
    return this.jobs.run(name);
  }
}

describe('the DistributedLockEngine token', () => {
  it('replaces the engine for the service, decorated methods and the HTTP mapping', async () => {
    const engine = createInMemoryLockEngine();
    const acquired: string[] = [];
    engine.events.on('acquired', (e) => acquired.push(e.key));
    const moduleRef = await Test.createTestingModule({
      // Nothing listens on port 1: any use of the real engine would fail.
      imports: [DistributedLockModule.forRoot({ redis: 'redis://127.0.0.1:1', commandTimeoutMs: 200 })],
      controllers: [JobsController],
      providers: [Jobs],
    })
      .overrideProvider(DistributedLockEngine)
      .useValue(engine)
      .compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    try {
      const service = app.get(DistributedLockService);
      await service.using('manual', {}, async (lock) => expect(lock.fencingToken).toBeGreaterThan(0));
      await expect(app.get(Jobs).run('a')).resolves.toBeGreaterThan(0);
      await request(app.getHttpServer()).post('/jobs/b').expect(201);
      // Held "elsewhere" in the replacement engine: the route answers 423 through the same mapping.
      await LockTestingControls.of(engine).holdElsewhere('job:c', { forMs: 5_000 });
      await request(app.getHttpServer()).post('/jobs/c').expect(423);
      expect(acquired).toEqual(['manual', 'job:a', 'job:b']);
      expect((await service.health()).status).toBe('up');
    } finally {
      await app.close();
    }
    expect(engine.stats().closed).toBe(true); // the service closed the engine it was given
  });
});
