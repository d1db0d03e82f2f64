import { BadRequestException, Controller, Get, Param, Post } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import {
  DistributedLock,
  DistributedLockInterceptor,
  DistributedLockModule,
  DistributedLockService,
  LockedException,
} from '../../lib';
import { createLockEngine, LockEngine } from '../../lib/core/public';
import type { LockNotAcquiredError as BusyError } from '../../lib';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp } from '../support/nest-env';
import type Redis from 'ioredis';

const PREFIX = 'route:';
const ran: string[] = [];

@Controller('seckill')
class SeckillController {
  constructor(private readonly locks: DistributedLockService) {}

  @Post(':id')
  @DistributedLock({ key: 'seckill:{0}', waitMs: 0 })
  async buy(@Param('id') id: string) {
    ran.push(`buy:${id}`);
    const lock = this.locks.current();
    return { id, key: lock?.key, token: lock?.fencingToken, held: lock?.isHeld };
  }

  @Get('refused/:id')
  @DistributedLock({ key: 'refused:{0}' })
  refuse(@Param('id') _id: string): never {
    throw new BadRequestException('not today');
  }

  @Get('plain/:id')
  @DistributedLock({ key: 'plain:{0}', reentrant: false })
  async plainTwice(@Param('id') id: string) {
    // A token lock is not reentrant: asking again from inside is refused, with no lease to report.
    await this.locks.acquire(`plain:${id}`, { reentrant: false });
  }
}

/** Stands in for the same service in another replica: its own engine on the same Redis. */
let otherReplica: LockEngine;
let server: RedisServerProcess;
let probe: Redis;
let app: INestApplication;

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
  otherReplica = createLockEngine({ redis: server.url, keyPrefix: PREFIX });
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: PREFIX })],
    controllers: [SeckillController],
  });
});

afterAll(async () => {
  await closeApps(app);
  await otherReplica?.close();
  if (probe) await closeClient(probe);
  await server?.stop();
});

describe('@DistributedLock() on a controller route', () => {
  it('runs the handler holding the lock and releases it after the response', async () => {
    const res = await request(app.getHttpServer()).post('/seckill/1').expect(201);
    expect(res.body).toMatchObject({ id: '1', key: 'seckill:1', held: true });
    expect(res.body.token).toBeGreaterThan(0);
    expect(await probe.exists(`${PREFIX}{seckill:1}:m`)).toBe(0);
  });

  it('gives fencing tokens that increase from one request to the next', async () => {
    const first = await request(app.getHttpServer()).post('/seckill/2').expect(201);
    const second = await request(app.getHttpServer()).post('/seckill/2').expect(201);
    expect(second.body.token).toBeGreaterThan(first.body.token);
  });

  it('answers 423 with Retry-After from the holder lease when the lock is held elsewhere', async () => {
    const held = await otherReplica.acquire('seckill:3', { leaseMs: 20_000 });
    try {
      const res = await request(app.getHttpServer()).post('/seckill/3').expect(423);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);
      expect(res.body).toEqual({
        statusCode: 423,
        error: 'Locked',
        message: expect.stringMatching(/locked/i),
      });
      expect(ran).not.toContain('buy:3');
    } finally {
      await held.release();
    }
    await request(app.getHttpServer()).post('/seckill/3').expect(201);
    expect(ran).toContain('buy:3');
  });

  it('sends Retry-After: 1 when the holder lease is unknown', async () => {
    const res = await request(app.getHttpServer()).get('/seckill/plain/1').expect(423);
    expect(res.headers['retry-after']).toBe('1');
    expect(await probe.exists(`${PREFIX}{plain:1}:m`)).toBe(0);
  });

  it('lets errors that are not lock errors through unchanged and still releases the lock', async () => {
    const res = await request(app.getHttpServer()).get('/seckill/refused/7').expect(400);
    expect(res.body.message).toBe('not today');
    expect(await probe.exists(`${PREFIX}{refused:7}:m`)).toBe(0);
  });
});

describe('HTTP settings of the module', () => {
  it('uses busyStatus and leaves Retry-After out when retryAfter is false', async () => {
    const custom = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: PREFIX,
          busyStatus: 409,
          retryAfter: false,
        }),
      ],
      controllers: [SeckillController],
    });
    const held = await otherReplica.acquire('seckill:4', { leaseMs: 20_000 });
    try {
      const res = await request(custom.getHttpServer()).post('/seckill/4').expect(409);
      expect(res.headers['retry-after']).toBeUndefined();
      // The body names the status it comes with.
      expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    } finally {
      await held.release();
      await closeApps(custom);
    }
  });

  it('takes Retry-After from a retryAfter function', async () => {
    const seen: number[] = [];
    const custom = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: PREFIX,
          retryAfter: (error: BusyError) => {
            seen.push(error.retryAfterMs);
            return 42;
          },
        }),
      ],
      controllers: [SeckillController],
    });
    const held = await otherReplica.acquire('seckill:5', { leaseMs: 20_000 });
    try {
      const res = await request(custom.getHttpServer()).post('/seckill/5').expect(423);
      expect(res.headers['retry-after']).toBe('42');
      expect(seen).toHaveLength(1);
      expect(seen[0]).toBeGreaterThan(0);
    } finally {
      await held.release();
      await closeApps(custom);
    }
  });

  it('lets a global subclass of the interceptor answer instead of the one the decorator adds', async () => {
    class TooManyRequestsInterceptor extends DistributedLockInterceptor {
      protected override createLockedException(_context: unknown, error: BusyError) {
        return new LockedException({ status: 429, message: `try again (${error.name})`, cause: error });
      }
    }
    const custom = await startApp({
      imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: PREFIX })],
      controllers: [SeckillController],
      providers: [{ provide: APP_INTERCEPTOR, useClass: TooManyRequestsInterceptor }],
    });
    const held = await otherReplica.acquire('seckill:6', { leaseMs: 20_000 });
    try {
      const res = await request(custom.getHttpServer()).post('/seckill/6').expect(429);
      expect(res.body.message).toBe('try again (LockNotAcquiredError)');
    } finally {
      await held.release();
      await closeApps(custom);
    }
  });
});

describe('when Redis is unreachable', () => {
  it('answers 503 instead of 423 or 500', async () => {
    const doomed = await startRedis();
    const custom = await startApp({
      imports: [
        DistributedLockModule.forRoot({ redis: doomed.url, keyPrefix: PREFIX, commandTimeoutMs: 2000 }),
      ],
      controllers: [SeckillController],
    });
    try {
      await request(custom.getHttpServer()).post('/seckill/8').expect(201);
      await doomed.stop();
      const res = await request(custom.getHttpServer()).post('/seckill/9').expect(503);
      expect(res.body.message).toMatch(/unavailable/i);
      expect(ran).not.toContain('buy:9');
    } finally {
      await closeApps(custom);
      await doomed.stop();
    }
  });
});
