/*
 * A key function built from request data (issue 18, point 7): a lone key function returns exactly
 * one key; returning an array is a 400 before any command, so a client cannot turn one route into a
 * lock of up to 64 keys of its choosing. Only a function listed in an array `key` may return several.
 */
import { Body, Controller, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, DistributedLockModule } from '../../lib';
import { commandCounts } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp } from '../support/nest-env';

let server: RedisServerProcess;
let app: INestApplication;

@Controller('orders')
class OrdersController {
  /** One key expected; the client sends `ids`. */
  @Post('single')
  @DistributedLock({ key: (body: { ids: unknown }) => body.ids as string, waitMs: 0 })
  async single(@Body() body: { ids: unknown }): Promise<{ ok: unknown }> {
    return { ok: body.ids };
  }

  /** Several keys declared: `key: [fn]`. */
  @Post('several')
  @DistributedLock({ key: [(body: { ids: string[] }) => body.ids.map((id) => `order:${id}`)], waitMs: 0 })
  async several(@Body() body: { ids: string[] }): Promise<{ ok: string[] }> {
    return { ok: body.ids };
  }
}

beforeAll(async () => {
  server = await startRedis();
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: 'kfc:' })],
    controllers: [OrdersController],
  });
});

afterAll(async () => {
  await closeApps(app);
  await server?.stop();
});

const scriptCalls = async (): Promise<number> => {
  const counts = await commandCounts(server.port);
  return (counts.get('evalsha') ?? 0) + (counts.get('eval') ?? 0);
};

describe('a key function returning an array', () => {
  it('is a 400 on a single-key decorator, and no lock command is sent', async () => {
    const before = await scriptCalls();
    const ids = Array.from({ length: 64 }, (_, i) => `k${i}`);
    const res = await request(app.getHttpServer()).post('/orders/single').send({ ids });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/must return a non-empty string, got an array/);
    expect(await scriptCalls()).toBe(before);
  });

  it('still works with one string', async () => {
    const res = await request(app.getHttpServer()).post('/orders/single').send({ ids: 'one' });
    expect(res.status).toBe(201);
  });

  it('takes every key where the decorator declares several (key: [fn])', async () => {
    const res = await request(app.getHttpServer())
      .post('/orders/several')
      .send({ ids: ['a', 'b'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ok: ['a', 'b'] });
  });
});
