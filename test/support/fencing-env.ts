import Redis from 'ioredis';
import { Pool } from 'pg';
import { startPostgres, type PostgresServer } from './postgres';
import { startRedis, type RedisServerProcess } from './redis-server';
import { spawnWorker, workerPath, type WorkerProcess } from './spawn-worker';
import type { FencedWriterCommand, FencedWriterMessage } from './workers/fenced-writer-protocol';
import { COUNTERS_DDL } from './fencing-tables';

/** What the fencing specs work against: the lock's Redis, PostgreSQL with `counters`, and a store Redis. */
export interface FencingEnv {
  redis: RedisServerProcess;
  storeServer: RedisServerProcess;
  postgres: PostgresServer;
  pool: Pool;
  store: Redis;
}

/** Starts the three servers in beforeAll (creating `counters`) and stops them, clients first, in afterAll. */
export function useFencingEnv(): FencingEnv {
  const env = {} as FencingEnv;
  beforeAll(async () => {
    [env.redis, env.storeServer, env.postgres] = await Promise.all([
      startRedis(),
      startRedis(),
      startPostgres(),
    ]);
    env.pool = new Pool({ connectionString: env.postgres.url, max: 4 });
    // pool.end() in afterAll resolves before its sockets close, and PostgreSQL's shutdown right after can
    // end a closing idle connection with 57P01: without a listener the pool's 'error' event would throw
    // in the Jest worker. Queries on a broken connection still reject, so nothing is hidden from a test.
    env.pool.on('error', () => undefined);
    await env.pool.query(COUNTERS_DDL);
    env.store = new Redis(env.storeServer.url, { maxRetriesPerRequest: 2 });
  }, 90_000);
  afterAll(async () => {
    await env.pool?.end();
    await env.store?.quit();
    await Promise.allSettled([env.redis?.stop(), env.storeServer?.stop(), env.postgres?.stop()]);
  }, 60_000);
  return env;
}

/** A fenced-writer worker process, with typed send and wait. */
export interface FencedWriter {
  process: WorkerProcess<FencedWriterMessage>;
  send(command: FencedWriterCommand): void;
  next<T extends FencedWriterMessage['type']>(
    type: T,
    timeoutMs?: number,
  ): Promise<Extract<FencedWriterMessage, { type: T }>>;
  stop(): Promise<void>;
}

/** Spawns test/support/workers/fenced-writer-worker.ts against `env` and waits for it to be ready. */
export async function startFencedWriter(
  env: FencingEnv,
  keyPrefix: string,
  redisUrl = env.redis.url,
): Promise<FencedWriter> {
  const worker = spawnWorker<FencedWriterMessage>(workerPath('fenced-writer-worker.ts'), {
    env: {
      REDIS_URL: redisUrl,
      DATABASE_URL: env.postgres.url,
      STORE_URL: env.storeServer.url,
      KEY_PREFIX: keyPrefix,
    },
  });
  const next = <T extends FencedWriterMessage['type']>(type: T, timeoutMs = 60_000) =>
    worker
      .waitForMessage<Extract<FencedWriterMessage, { type: T }>>(
        (m) => m.type === type || m.type === 'failed',
        timeoutMs,
      )
      .then((m) => {
        if (m.type === 'failed') throw new Error(`worker failed: ${(m as { error: string }).error}`);
        return m;
      });
  await next('ready');
  return {
    process: worker,
    send: (command) => worker.send(command),
    next,
    stop: async () => {
      if (worker.running && !worker.paused) {
        worker.send({ cmd: 'close' });
        await worker.waitForMessage((m) => m.type === 'closed', 10_000).catch(() => undefined); // stop() below ends it anyway
      }
      await worker.stop();
    },
  };
}
