/*
 * A lock holder that writes through the fencing helpers, in its own OS process, driven over
 * stdin/stdout (test/support/spawn-worker.ts). Env: REDIS_URL (the lock), DATABASE_URL (PostgreSQL,
 * table `counters`), STORE_URL (the Redis the fenced store writes), KEY_PREFIX.
 */
import Redis from 'ioredis';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createLockEngine, type LockHandle } from '../../../lib/core/public';
import {
  currentFence,
  fencedUpdate,
  fenceOf,
  RedisFencedStore,
  StaleFenceError,
  typeormFencedUpdate,
  type Fence,
} from '../../../lib/fencing';
import { emit, onParentMessage, requiredEnv } from '../worker-io';
import { CounterEntity } from '../fencing-tables';
import type { FencedBackend, FencedWriterCommand, FencedWriterMessage } from './fenced-writer-protocol';

const send = (message: FencedWriterMessage): void => emit(message as unknown as Record<string, unknown>);
process.on('unhandledRejection', (reason) => {
  send({ type: 'failed', error: String((reason as Error)?.stack ?? reason) });
  process.exitCode = 70;
});

const engine = createLockEngine({ redis: requiredEnv('REDIS_URL'), keyPrefix: requiredEnv('KEY_PREFIX') });
const pool = process.env.DATABASE_URL
  ? new Pool({ connectionString: process.env.DATABASE_URL, max: 2 })
  : undefined;
const orm = process.env.DATABASE_URL
  ? new DataSource({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [CounterEntity],
      poolSize: 2,
    })
  : undefined;
const storeClient = process.env.STORE_URL
  ? new Redis(process.env.STORE_URL, { maxRetriesPerRequest: 2 })
  : undefined;
const store = storeClient ? new RedisFencedStore(storeClient) : undefined;
const held = new Map<string, LockHandle>();
const query = (text: string, values: unknown[]) => pool!.query(text, values);

async function read(backend: FencedBackend, key: string): Promise<number> {
  if (backend === 'redis') return Number((await storeClient!.get(`counter:${key}`)) ?? 0);
  const { rows } = await pool!.query('SELECT value FROM counters WHERE id = $1', [key]);
  return Number(rows[0].value);
}

/** One fenced write of `value` to the row or key `key`. */
async function write(backend: FencedBackend, key: string, value: number, fence: Fence): Promise<void> {
  if (backend === 'redis') return store!.set(`counter:${key}`, String(value), fence);
  if (backend === 'typeorm') {
    const written = await typeormFencedUpdate(orm!.getRepository(CounterEntity), {
      where: { id: key },
      set: { value },
      fence,
    });
    if (written !== 1) throw new Error(`row ${key} missing`);
    return;
  }
  const written = await fencedUpdate(query, {
    dialect: 'postgres',
    table: 'counters',
    set: { value },
    where: { id: key },
    fence,
  });
  if (written !== 1) throw new Error(`row ${key} missing`);
}

async function handle(message: FencedWriterCommand): Promise<void> {
  switch (message.cmd) {
    case 'hold': {
      const lock = await engine.acquire(message.key, { waitMs: 30_000, leaseMs: message.leaseMs });
      held.set(message.key, lock);
      lock.signal.addEventListener('abort', () => send({ type: 'lost', key: message.key }));
      send({ type: 'acquired', key: message.key, token: lock.fencingToken, owner: fenceOf(lock).owner });
      return;
    }
    case 'write': {
      const lock = held.get(message.key)!;
      const full = fenceOf(lock);
      // Without the signal: the holder checked it just before it stopped, then wrote (the race the fence closes).
      const fence =
        message.checkSignal === false ? { key: full.key, token: full.token, owner: full.owner } : full;
      try {
        await write(message.backend, message.key, message.value, fence);
        send({ type: 'written', key: message.key, token: lock.fencingToken, accepted: true });
      } catch (error) {
        send({
          type: 'written',
          key: message.key,
          token: lock.fencingToken,
          accepted: false,
          error: (error as Error).name,
          storedFence: error instanceof StaleFenceError ? String(error.storedFence) : undefined,
        });
      }
      return;
    }
    case 'increment': {
      let stale = 0;
      const tokens: number[] = [];
      const reads: number[] = [];
      for (let i = 0; i < message.rounds; i++) {
        await engine.using(message.key, { waitMs: 120_000 }, async () => {
          // The fence comes from the async context, as a repository method would take it.
          const fence = currentFence(engine, message.key);
          tokens.push(Number(fence.token));
          const value = await read(message.backend, message.key);
          reads.push(value);
          await new Promise((resolve) => setImmediate(resolve)); // let the others run between read and write
          try {
            await write(message.backend, message.key, value + 1, fence);
          } catch (error) {
            if (!(error instanceof StaleFenceError)) throw error;
            stale++;
          }
        });
      }
      send({ type: 'incremented', key: message.key, rounds: message.rounds, stale, tokens, reads });
      return;
    }
    case 'release': {
      const result = (await held.get(message.key)?.release()) ?? false;
      held.delete(message.key);
      send({ type: 'released', key: message.key, result });
      return;
    }
    case 'close': {
      stopListening();
      await engine.close();
      await pool?.end();
      if (orm?.isInitialized) await orm.destroy();
      await storeClient?.quit();
      send({ type: 'closed' });
      return;
    }
  }
}

const stopListening = onParentMessage((message: FencedWriterCommand) => {
  handle(message).catch((error) => send({ type: 'failed', error: String(error?.stack ?? error) }));
});
(orm ? orm.initialize() : Promise.resolve())
  .then(() => send({ type: 'ready', pid: process.pid }))
  .catch((error) => send({ type: 'failed', error: String(error?.stack ?? error) }));
