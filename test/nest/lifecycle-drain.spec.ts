import * as http from 'node:http';
import { Controller, Get, Injectable, Module, Param, type OnModuleInit } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type Redis from 'ioredis';
import {
  DistributedLock,
  DistributedLockModule,
  DistributedLockService,
  LockLostError,
  type LockHandle,
  type LockOptions,
  type MultiLockHandle,
} from '../../lib';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { sleep, waitUntil } from '../support/wait';
import { baseUrl, closeApps, PLATFORMS, startApp, uniquePrefix } from '../support/nest-env';

/** What a running job saw. */
interface JobRecord {
  started: boolean;
  ended: boolean;
  abortedWhileRunning: boolean;
  reason?: unknown;
}
const job: JobRecord = { started: false, ended: false, abortedWhileRunning: false };

@Injectable()
class Jobs {
  constructor(private readonly locks: DistributedLockService) {}

  /** A 1.5 s critical section; notes whether its lock's signal fired while it ran. */
  @DistributedLock({ key: 'drain:job' })
  async work(ms: number): Promise<string | undefined> {
    const signal = this.locks.current()!.signal;
    job.started = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    job.abortedWhileRunning = signal.aborted;
    job.reason = signal.reason;
    job.ended = true;
    return this.locks.current()?.key;
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

beforeEach(() =>
  Object.assign(job, { started: false, ended: false, abortedWhileRunning: false, reason: undefined }),
);

/**
 * A watchdog lease shorter than the 1.5 s job: a lock that is not renewed during the drain would expire
 * in it. Renewed every 200 ms, so an event loop held up to ~800 ms on a loaded machine still renews in
 * time (with 400 ms, renewed every 133 ms, a fresh-clone run lost it once: run 42).
 */
const startJobsApp = (prefix: string, drainMs?: number) =>
  startApp({
    imports: [
      DistributedLockModule.forRoot({
        redis: server.url,
        keyPrefix: prefix,
        watchdogLeaseMs: 1_000,
        renewEveryMs: 200,
        drainMs,
      }),
    ],
    providers: [Jobs],
  });

/** 1 while the lock key (not its fencing counter) exists. */
const lockKey = async (prefix: string) =>
  (await probe.keys(`${prefix}*`)).filter((key) => key.includes('drain:job') && !key.endsWith(':fence'))
    .length;

describe('app.close() drains running critical sections', () => {
  let afterThis: INestApplication | undefined;
  afterEach(async () => {
    await afterThis?.close().catch(() => undefined);
    afterThis = undefined;
  });

  it('keeps the lock (renewed) until a 1.5 s job ends, without aborting its signal', async () => {
    const prefix = uniquePrefix('drain');
    const app = await startJobsApp(prefix);
    afterThis = app;
    const running = app.get(Jobs).work(1_500);
    await waitUntil(() => job.started, { description: 'the job to start' });
    expect(await lockKey(prefix)).toBe(1);
    const closed = app.close();
    const seen: number[] = [];
    while (!job.ended) {
      seen.push(await lockKey(prefix));
      await sleep(50);
    }
    await expect(running).resolves.toBe('drain:job');
    await closed;
    expect(seen.length).toBeGreaterThan(10);
    // Present at every look while the job ran (the 1 s lease was renewed through the drain).
    expect(seen.filter((n) => n !== 1)).toEqual([]);
    expect(job.abortedWhileRunning).toBe(false);
    expect(await lockKey(prefix)).toBe(0);
  });

  it("aborts a job outliving drainMs (300) with LockLostError reason 'closed'", async () => {
    const prefix = uniquePrefix('drain-out');
    const app = await startJobsApp(prefix, 300);
    afterThis = app;
    const running = app.get(Jobs).work(5_000);
    await waitUntil(() => job.started, { description: 'the job to start' });
    await app.close();
    await running.catch(() => undefined);
    expect(job.ended).toBe(true);
    expect(job.abortedWhileRunning).toBe(true);
    expect(job.reason).toBeInstanceOf(LockLostError);
    expect((job.reason as LockLostError).reason).toBe('closed');
    expect(await lockKey(prefix)).toBe(0);
  });
});

/**
 * GET on a connection of its own that closes with the response (`agent: false`). A keep-alive connection
 * (fetch's) would hold the server's close() until its keep-alive timeout: 5 s on Express, 72 s on Fastify.
 */
function getOnce(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** A route whose 600 ms critical section makes a second request on the same key wait. */
@Controller('drain')
class DrainController {
  @Get(':id')
  @DistributedLock({ key: 'drain:http', waitMs: 10_000 })
  async serve(@Param('id') id: string): Promise<{ id: string }> {
    await sleep(600);
    return { id };
  }
}

describe.each(PLATFORMS)('app.close() on %s with requests in flight', (platform) => {
  it('serves a request that was waiting for the lock when close() began (Nest closes HTTP first)', async () => {
    const prefix = uniquePrefix('drain-http');
    const app = await startApp(
      {
        imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: prefix })],
        controllers: [DrainController],
      },
      { platform, listen: true },
    );
    const base = await baseUrl(app);
    try {
      const locks = app.get(DistributedLockService);
      const first = getOnce(`${base}/drain/1`);
      await waitUntil(() => locks.stats().held === 1, { description: 'the first request to hold the lock' });
      const second = getOnce(`${base}/drain/2`);
      await waitUntil(() => locks.stats().waitingLocks === 1, { description: 'the second request to wait' });
      const closed = app.close();
      const answers = await Promise.all([first, second]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(JSON.parse(answers[1].body)).toEqual({ id: '2' });
      await closed;
      expect(await probe.keys(`${prefix}*drain:http*`)).not.toContainEqual(expect.stringMatching(/:m$/));
    } finally {
      await closeApps(app);
    }
  });
});

/* A decorated call made from a deeper module's onModuleInit. */
const deepCalls: (string | undefined)[] = [];

@Injectable()
class DeepJob implements OnModuleInit {
  constructor(private readonly locks: DistributedLockService) {}

  @DistributedLock({ key: 'deep:init', waitMs: 2_000 })
  async warmUp(): Promise<string | undefined> {
    return this.locks.current()?.key;
  }

  async onModuleInit(): Promise<void> {
    deepCalls.push(await this.warmUp());
  }
}

@Module({ providers: [DeepJob] })
class InnerModule {}

@Module({ imports: [InnerModule] })
class OuterModule {}

/** Records every acquisition that goes through it. */
const viaOverride: string[] = [];
@Injectable()
class RecordingLockService extends DistributedLockService {
  // The service's acquire() is overloaded (one key, or several: a multi-key lock); an override keeps them.
  override acquire(key: string, options?: LockOptions): Promise<LockHandle>;
  override acquire(keys: readonly string[], options?: LockOptions): Promise<MultiLockHandle>;
  override acquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<LockHandle | MultiLockHandle>;
  override acquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<LockHandle | MultiLockHandle> {
    viaOverride.push(String(key));
    return super.acquire(key, options);
  }
}

describe('decorated methods get their service by injection', () => {
  it("works from a deeper module's onModuleInit", async () => {
    deepCalls.length = 0;
    const app: INestApplication = await startApp({
      imports: [
        DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('deep'), isGlobal: true }),
        OuterModule,
      ],
    });
    try {
      expect(deepCalls).toEqual(['deep:init']);
    } finally {
      await closeApps(app);
    }
  });

  it('works after compile() without init()', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('compiled') })],
      providers: [Jobs],
    }).compile();
    try {
      await expect(moduleRef.get(Jobs).work(1)).resolves.toBe('drain:job');
    } finally {
      await moduleRef.close();
    }
  });

  it('reaches a service replaced with overrideProvider(DistributedLockService)', async () => {
    viaOverride.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('override') })],
      providers: [Jobs],
    })
      .overrideProvider(DistributedLockService)
      .useClass(RecordingLockService)
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      expect(app.get(DistributedLockService)).toBeInstanceOf(RecordingLockService);
      await expect(app.get(Jobs).work(1)).resolves.toBe('drain:job');
      expect(viaOverride).toEqual(['drain:job']);
    } finally {
      await closeApps(app);
    }
  });
});
