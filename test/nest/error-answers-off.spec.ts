import { Controller, Get, Param, UseInterceptors } from '@nestjs/common';
import request from 'supertest';
import {
  DistributedLock,
  DistributedLockInterceptor,
  DistributedLockModule,
  DistributedLockService,
} from '../../lib';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';

/*
 * `httpErrors: false` turns off the interceptor DistributedLockModule registers globally, so that the
 * app can register DistributedLockInterceptor itself where it wants it (README). An interceptor the
 * app registers itself must still answer, in the same app. (`transportErrors: false`: in
 * test/transports/microservices.spec.ts.)
 */

@Controller('own')
@UseInterceptors(DistributedLockInterceptor)
class OwnInterceptorController {
  @Get(':id')
  @DistributedLock({ key: 'item:{0}', waitMs: 0 })
  async get(@Param('id') id: string): Promise<{ id: string }> {
    return { id };
  }
}

@Controller('bare')
class BareController {
  @Get(':id')
  @DistributedLock({ key: 'item:{0}', waitMs: 0 })
  async get(@Param('id') id: string): Promise<{ id: string }> {
    return { id };
  }
}

let server: RedisServerProcess;

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe('httpErrors: false', () => {
  it('leaves a route without its own interceptor unanswered, and one with it answered 423', async () => {
    const app = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: uniquePrefix('http-errors-off'),
          httpErrors: false,
        }),
      ],
      controllers: [OwnInterceptorController, BareController],
    });
    try {
      const held = await app.get(DistributedLockService).acquire('item:1');
      try {
        const own = await request(app.getHttpServer()).get('/own/1');
        expect(own.status).toBe(423);
        expect(own.headers['retry-after']).toBeDefined();
        // No global interceptor: the lock error reaches Nest's default filter.
        expect((await request(app.getHttpServer()).get('/bare/1')).status).toBe(500);
      } finally {
        await held.release();
      }
      expect((await request(app.getHttpServer()).get('/own/1')).status).toBe(200);
    } finally {
      await closeApps(app);
    }
  });
});
