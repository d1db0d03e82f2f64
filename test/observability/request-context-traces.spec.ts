/*
 * With an OpenTelemetry SDK and its AsyncLocalStorage context manager, what runs when a lock is lost
 * (the handle's abort listeners, `lost` listeners, the hold span's end) runs in the trace of the request
 * that took the lock, and what the engine does for itself (renewal rounds) in no request's trace. The
 * engine opened its connections and timers inside the first request that locked, so all of it ran in
 * that request's trace for the engine's life (issue 47).
 */
import {
  Controller,
  Injectable,
  MiddlewareConsumer,
  Module,
  NestModule,
  OnModuleInit,
  Param,
  Post,
} from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockModule, DistributedLockService, type LockHandle } from '../../lib';
import { OTEL_SPANS } from '../../lib/observability';
import { redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, PLATFORMS, uniquePrefix, type Platform } from '../support/nest-env';
import { registerTestOtelSdk, type TestOtelSdk } from '../support/otel-sdk';
import { waitUntil } from '../support/wait';

/** The request span active where something ran: its name, or 'none'. */
function activeRequest(): string {
  const span = trace.getActiveSpan() as { name?: string } | undefined;
  return span?.name ?? 'none';
}

/** What ran where: `${what} ${key}` → the request span active then. */
const seen = new Map<string, string[]>();
function note(what: string, where = activeRequest()): void {
  seen.set(what, [...(seen.get(what) ?? []), where]);
}

@Controller()
class LocksController {
  private readonly held = new Map<string, LockHandle>();

  constructor(private readonly locks: DistributedLockService) {}

  @Post('lease/:key')
  async lease(@Param('key') key: string): Promise<{ token: number }> {
    const handle = await this.locks.acquire(key);
    await handle.release();
    return { token: handle.fencingToken };
  }

  /** Takes a lock (watchdog lease), keeps it after answering, and notes where its abort listener runs. */
  @Post('hold/:key')
  async hold(@Param('key') key: string): Promise<{ token: number }> {
    const handle = await this.locks.acquire(key);
    handle.signal.addEventListener('abort', () => note(`abort ${key}`));
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

/** The app's own listeners on the lock events. */
@Injectable()
class LockListeners implements OnModuleInit {
  constructor(private readonly locks: DistributedLockService) {}
  onModuleInit(): void {
    this.locks.events.on('lost', (e) => note(`lost ${e.key}`));
    this.locks.events.on('renewed', () => note('renewed'));
  }
}

/** A server span per request (what HTTP instrumentation does), named `request <x-request-id>`. */
@Module({ controllers: [LocksController], providers: [LockListeners] })
class TracedApp implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply((req: IncomingMessage, res: ServerResponse, next: () => void) => {
        const tracer = trace.getTracer('test-http');
        tracer.startActiveSpan(`request ${String(req.headers['x-request-id'])}`, (span) => {
          res.on('finish', () => span.end());
          next();
        });
      })
      .forRoutes('*');
  }
}

let server: RedisServerProcess;
let sdk: TestOtelSdk;
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(async () => {
  server = await startRedis();
});
beforeEach(() => {
  sdk = registerTestOtelSdk();
  context.setGlobalContextManager(contextManager.enable());
  seen.clear();
});
afterEach(async () => {
  context.disable();
  await sdk.shutdown();
});
afterAll(async () => {
  await server?.stop();
});

async function startTracedApp(platform: Platform, keyPrefix: string): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      DistributedLockModule.forRoot({
        redis: server.url,
        keyPrefix,
        telemetry: true,
        // Renewal rounds every 200 ms, so the spec sees some while its locks are held.
        watchdogLeaseMs: 1_500,
        renewEveryMs: 200,
      }),
      TracedApp,
    ],
  }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  await app.init();
  if (platform === 'fastify') await (app as NestFastifyApplication).getHttpAdapter().getInstance().ready();
  return app;
}

describe.each(PLATFORMS)('lock events under an OpenTelemetry SDK (%s)', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.get(LocksController).releaseAll();
    await closeApps(app);
    app = undefined;
  });

  it('run a loss in the trace of the request that held the lock, and renewals in none', async () => {
    const prefix = uniquePrefix('ctx-trace');
    app = await startTracedApp(platform, prefix);
    const post = (path: string, id: string) =>
      request(app!.getHttpServer()).post(path).set('x-request-id', id).expect(201);

    // The app's first lock call: the engine opens its connections and starts its timers now.
    await post('/lease/job:first', 'r1-first');
    await post('/hold/job:nightly', 'r2-nightly');
    await post('/hold/job:daily', 'r3-daily');

    // A loss the watchdog finds: the lock's key deleted behind the holder's back.
    const keys = (await redisCommand(server.port, ['KEYS', `${prefix}*daily*`])) as string[];
    const lockKey = keys.find((k) => k.endsWith(':m'));
    expect(lockKey).toBeDefined();
    await redisCommand(server.port, ['DEL', lockKey!]);
    await waitUntil(() => seen.has('lost job:daily'), { description: 'the loss of job:daily' });
    // A force release from another request.
    await post('/force/job:nightly', 'r4-force');
    await waitUntil(() => seen.has('lost job:nightly'), { description: 'the loss of job:nightly' });

    expect({
      lostDaily: seen.get('lost job:daily'),
      abortDaily: seen.get('abort job:daily'),
      lostNightly: seen.get('lost job:nightly'),
      abortNightly: seen.get('abort job:nightly'),
      renewals: [...new Set(seen.get('renewed'))],
    }).toEqual({
      lostDaily: ['request r3-daily'],
      abortDaily: ['request r3-daily'],
      lostNightly: ['request r2-nightly'],
      abortNightly: ['request r2-nightly'],
      renewals: ['none'],
    });

    // The library's hold spans: children of the request that took the lock, ended by the loss.
    const requestSpans = new Map(sdk.spans('request r3-daily').map((s) => [s.spanContext().spanId, s]));
    const daily = sdk
      .spans(OTEL_SPANS.hold)
      .filter((s) => requestSpans.has(s.parentSpanContext?.spanId ?? ''));
    expect(daily).toHaveLength(1);
    expect(daily[0]!.events.map((e) => e.name)).toEqual([OTEL_SPANS.lostEvent]);
  });
});
