/*
 * Under nestjs-pino, every log line carries the request whose async context it was written in. The
 * engine opens its connections, subscriptions and timers lazily, inside the first request that locks;
 * its own work (renewals, force-release notices) then ran in that request's context for the engine's
 * life, and a loss of a lock a LATER request held was logged with the first request's id (issue 47).
 * A lock's loss belongs to the request that took the lock; the engine's own work to no request.
 */
import { Controller, Injectable, OnModuleInit, Param, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Logger, LoggerModule } from 'nestjs-pino';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';
import request from 'supertest';
import { DistributedLockModule, DistributedLockService, type LockHandle } from '../../lib';
import { redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, PLATFORMS, uniquePrefix, type Platform } from '../support/nest-env';
import { waitUntil } from '../support/wait';

/** One JSON line pino wrote. */
interface PinoLine {
  level: number;
  msg: string;
  context?: string;
  req?: { id?: string };
}

/** Where pino writes: every line, parsed (pino writes each line with one synchronous write). */
class LineSink {
  readonly lines: PinoLine[] = [];
  write(chunk: string): void {
    for (const text of chunk.split('\n')) if (text) this.lines.push(JSON.parse(text) as PinoLine);
  }
  matching(pattern: RegExp): PinoLine[] {
    return this.lines.filter((l) => pattern.test(l.msg));
  }
}

@Controller()
class LocksController {
  private readonly held = new Map<string, LockHandle>();

  constructor(private readonly locks: DistributedLockService) {}

  /** Takes a lock and gives it back at once. */
  @Post('lease/:key')
  async lease(@Param('key') key: string): Promise<{ token: number }> {
    const handle = await this.locks.acquire(key);
    await handle.release();
    return { token: handle.fencingToken };
  }

  /** Takes a lock (watchdog lease) and keeps it after answering. */
  @Post('hold/:key')
  async hold(@Param('key') key: string): Promise<{ token: number }> {
    const handle = await this.locks.acquire(key);
    this.held.set(key, handle);
    return { token: handle.fencingToken };
  }

  @Post('force/:key')
  async force(@Param('key') key: string): Promise<{ released: boolean }> {
    return { released: await this.locks.forceRelease(key, { reason: 'stuck job', by: 'ops' }) };
  }

  releaseAll(): Promise<boolean[]> {
    return Promise.all([...this.held.values()].map((h) => h.release()));
  }
}

/** An app's own listener on the watchdog's rounds: its line says which request (if any) it ran in. */
@Injectable()
class RenewalLog implements OnModuleInit {
  constructor(
    private readonly locks: DistributedLockService,
    private readonly logger: Logger,
  ) {}
  onModuleInit(): void {
    this.locks.events.on('renewed', (round) =>
      this.logger.log(`renewal round: ${round.renewed} renewed`, 'Renewals'),
    );
  }
}

let server: RedisServerProcess;

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

async function startPinoApp(platform: Platform, sink: LineSink, keyPrefix: string) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LoggerModule.forRoot({
        pinoHttp: [
          {
            level: 'info',
            autoLogging: false,
            // The caller names its request (x-request-id), as a gateway in front of an app does.
            genReqId: (req: IncomingMessage) => String(req.headers['x-request-id']),
          },
          sink,
        ],
      }),
      DistributedLockModule.forRoot({
        redis: server.url,
        keyPrefix,
        // Renewal rounds every 200 ms, so the spec sees some while its locks are held.
        watchdogLeaseMs: 1_500,
        renewEveryMs: 200,
      }),
    ],
    controllers: [LocksController],
    providers: [RenewalLog],
  }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication<NestFastifyApplication>(
          // Fastify names the request before pino-http sees it: the same header names it there.
          new FastifyAdapter({
            genReqId: (req: { headers: IncomingMessage['headers'] }) => String(req.headers['x-request-id']),
          }),
          { bufferLogs: true },
        )
      : moduleRef.createNestApplication({ bufferLogs: true });
  app.useLogger(app.get(Logger));
  await app.init();
  if (platform === 'fastify') await (app as NestFastifyApplication).getHttpAdapter().getInstance().ready();
  return app;
}

describe.each(PLATFORMS)('the library’s log lines under nestjs-pino (%s)', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.get(LocksController).releaseAll();
    await closeApps(app);
    app = undefined;
    // nestjs-pino keeps the first app's logger for lines outside requests, process-wide.
    __resetOutOfContextForTests();
  });

  it('log a loss with the request that held the lock, and renewals with no request', async () => {
    const sink = new LineSink();
    const prefix = uniquePrefix('ctx-log');
    app = await startPinoApp(platform, sink, prefix);
    const http = () => request(app!.getHttpServer());
    const post = (path: string, id: string) => http().post(path).set('x-request-id', id).expect(201);

    // The app's first lock call: the engine opens its connections and starts its timers now.
    await post('/lease/job:first', 'r1-first');
    await post('/hold/job:nightly', 'r2-nightly');
    await post('/hold/job:daily', 'r3-daily');

    // A loss the watchdog finds: the lock's key deleted behind the holder's back.
    const keys = (await redisCommand(server.port, ['KEYS', `${prefix}*daily*`])) as string[];
    const lockKey = keys.find((k) => k.endsWith(':m'));
    expect(lockKey).toBeDefined();
    await redisCommand(server.port, ['DEL', lockKey!]);
    const deleted = await waitUntil(() => sink.matching(/"job:daily".*was lost \(deleted\)/)[0], {
      description: 'the lost-lock line of job:daily',
    });

    // A force release from another request: the holder hears of it by a notice on its subscription.
    await post('/force/job:nightly', 'r4-force');
    const forced = await waitUntil(() => sink.matching(/"job:nightly".*held here was force-released/)[0], {
      description: 'the force-released line of the holder',
    });
    const audit = sink.matching(/"job:nightly".*force-released by "ops"/)[0];

    // The watchdog's rounds are the library's own work: no request's.
    const rounds = sink.lines.filter((l) => l.context === 'Renewals');
    expect(rounds.length).toBeGreaterThan(0);
    expect({
      deleted: [deleted.context, deleted.req?.id],
      forced: [forced.context, forced.req?.id],
      // The audit line belongs to the request that force-released.
      audit: [audit?.context, audit?.req?.id],
      renewals: [...new Set(rounds.map((l) => l.req?.id ?? 'none'))],
    }).toEqual({
      deleted: ['DistributedLock', 'r3-daily'],
      forced: ['DistributedLock', 'r2-nightly'],
      audit: ['DistributedLock', 'r4-force'],
      renewals: ['none'],
    });
  });
});
