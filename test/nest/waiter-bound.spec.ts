/*
 * The per-key waiter bound over HTTP (issue 18, point 4): with `maxWaitersPerKey: 2`, a request beyond
 * the two callers already waiting on a busy route answers 423 at once instead of queueing; the two
 * that queued get the lock once it is free, and the route works again.
 */
import { Controller, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp } from '../support/nest-env';

let server: RedisServerProcess;
let app: INestApplication;

@Controller('stock')
class StockController {
  @Post('buy')
  @DistributedLock({ key: 'stock:buy', waitMs: 30_000 })
  async buy(): Promise<{ ok: true }> {
    return { ok: true };
  }
}

beforeAll(async () => {
  server = await startRedis();
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: 'wb:', maxWaitersPerKey: 2 })],
    controllers: [StockController],
  });
});

afterAll(async () => {
  await closeApps(app);
  await server?.stop();
});

describe('maxWaitersPerKey at the HTTP boundary', () => {
  it('answers 423 at once beyond the bound; the queued callers get the lock later', async () => {
    const service = app.get(DistributedLockService);
    const held = await service.acquire('stock:buy');
    // Two callers of this process queue on the key (they join the queue synchronously).
    let settled = 0;
    const queued = [1, 2].map(() =>
      service.acquire('stock:buy', { waitMs: 30_000 }).finally(() => {
        settled++;
      }),
    );
    const refused = await request(app.getHttpServer()).post('/stock/buy');
    expect(refused.status).toBe(423);
    expect(settled).toBe(0);
    expect(await held.release()).toBe(true);
    for (const waiter of queued) expect(await (await waiter).release()).toBe(true);
    // With room again, the route takes the lock.
    expect((await request(app.getHttpServer()).post('/stock/buy')).status).toBe(201);
  });
});
