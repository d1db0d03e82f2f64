/*
 * What each HTTP answer logs, as docs/TRANSPORTS.md "Logs" states it for every transport (the other
 * transports are checked in test/transports/ and test/support/lock-fixture.ts): through a real Nest app
 * on Express and on Fastify, with Nest's logger captured.
 *
 * - busy (423, or `busyStatus`) and unavailable (503): one warn line, context `DistributedLock`,
 *   `Answering <status> over http: <error name> (key "…"): …`, then nothing more for that answer
 *   within 10 s;
 * - a refused key (400): nothing;
 * - any other lock error (500): nothing of the library's; Nest's exception handler logs it, once,
 *   with its stack.
 */
import { Controller, Get, HttpStatus, Param, Query } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type Redis from 'ioredis';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { closeApps, PLATFORMS, uniquePrefix, type Platform } from '../support/nest-env';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';

/** A key with a line break and a quote: user data that must not forge or break a log line. */
const HOSTILE = 'a"b\nWARN forged';

@Controller('answers')
class AnswersController {
  @Get('busy/:id')
  @DistributedLock({ key: 'answers:{0}', waitMs: 0 })
  async busy(@Param('id') id: string): Promise<string> {
    return id;
  }

  // A query, not a path parameter: Fastify refuses path parameters over 100 characters itself (414).
  @Get('query')
  @DistributedLock({ key: 'answers:{0}', waitMs: 300 })
  async query(@Query('id') id: string): Promise<string> {
    return id;
  }

  @Get('slow/:id')
  @DistributedLock({ key: 'answers:{0}', waitMs: 300 })
  async slow(@Param('id') id: string): Promise<string> {
    return id;
  }
}

let server: RedisServerProcess;
let probe: Redis;

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
});

afterAll(async () => {
  await closeClient(probe);
  await server?.stop();
});

async function start(platform: Platform, prefix: string, logger: CapturingLogger, busyStatus?: number) {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: prefix, busyStatus })],
    controllers: [AnswersController],
  }).compile();
  const app: INestApplication =
    platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger })
      : moduleRef.createNestApplication({ logger });
  await app.listen(0, '127.0.0.1');
  return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

const library = (logger: CapturingLogger, from: number) =>
  logger.since(from).filter((line) => line.context === 'DistributedLock');

describe.each(PLATFORMS)('what each HTTP answer logs on %s', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    server.resume();
    await closeApps(app);
    app = undefined;
  });

  it('logs a busy answer once per 10 s at warn, key escaped, with the status it answered', async () => {
    const logger = new CapturingLogger();
    const started = await start(platform, uniquePrefix('log-busy'), logger, HttpStatus.CONFLICT);
    app = started.app;
    const held = await app.get(DistributedLockService).acquire(`answers:${HOSTILE}`);
    try {
      const from = logger.lines.length;
      const path = `${started.base}/answers/busy/${encodeURIComponent(HOSTILE)}`;
      expect((await fetch(path)).status).toBe(409);
      expect((await fetch(path)).status).toBe(409);
      const lines = library(logger, from);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'warn' });
      expect(lines[0]!.message).toMatch(
        /^Answering 409 over http: LockNotAcquiredError \(key "answers:a\\"b\\nWARN/,
      );
      expect(lines[0]!.message).not.toMatch(/[\r\n]/);
      expect(logger.since(from, 'error')).toEqual([]);
    } finally {
      await held.release();
    }
  });

  it('logs an unavailable answer (Redis frozen) once at warn, and a refused key not at all', async () => {
    const logger = new CapturingLogger();
    const started = await start(platform, uniquePrefix('log-503'), logger);
    app = started.app;
    expect((await fetch(`${started.base}/answers/slow/warm`)).status).toBe(200);

    let from = logger.lines.length;
    expect((await fetch(`${started.base}/answers/query?id=${'x'.repeat(600)}`)).status).toBe(400);
    expect(logger.since(from)).toEqual([]);

    server.pause();
    from = logger.lines.length;
    expect((await fetch(`${started.base}/answers/slow/1`)).status).toBe(503);
    expect((await fetch(`${started.base}/answers/slow/2`)).status).toBe(503);
    server.resume();
    const lines = library(logger, from).filter((line) => /^Answering/.test(line.message));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn' });
    expect(lines[0]!.message).toMatch(/^Answering 503 over http: LockRedisError \(key "answers:1"\): /);
    expect(logger.since(from, 'error').filter((line) => line.context !== 'DistributedLock')).toEqual([]);
  });

  it('leaves another lock error (500) to Nest, which logs it once with its stack', async () => {
    const logger = new CapturingLogger();
    const prefix = uniquePrefix('log-500');
    const started = await start(platform, prefix, logger);
    app = started.app;
    // The lock's own Redis key holding data of another type: LockWrongTypeError, a bug to fix, not busy.
    await probe.rpush(`${prefix}{answers:w}:m`, 'app data');
    const from = logger.lines.length;
    expect((await fetch(`${started.base}/answers/busy/w`)).status).toBe(500);
    expect(library(logger, from).filter((line) => /^Answering/.test(line.message))).toEqual([]);
    const errors = logger.since(from, 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/LockWrongTypeError/);
    expect(errors[0]!.message).toMatch(/\n\s+at /);
  });
});
