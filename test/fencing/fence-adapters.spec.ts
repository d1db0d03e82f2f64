/*
 * One rule, every storage: the same table of writes goes through each helper against real storage
 * (PostgreSQL via the SQL helper, Knex, Drizzle and TypeORM; SQLite via sql.js, SQLite compiled to
 * WebAssembly; the Redis fenced store; the in-process ledger), and each must accept and refuse
 * exactly as admitsFence() says, leaving a refused write unwritten. Prisma is not run here (its CLI downloads an engine).
 */
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { eq } from 'drizzle-orm';
import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';
import knexFactory, { type Knex } from 'knex';
import { createClient } from 'redis';
import Redis from 'ioredis';
import initSqlJs, { type Database as SqlJsDatabase, type SqlValue } from 'sql.js';
import { DataSource } from 'typeorm';
import {
  admitsFence,
  drizzleFencedUpdate,
  fencedUpdate,
  knexFencedUpdate,
  MemoryFenceLedger,
  RedisFencedStore,
  StaleFenceError,
  typeormFencedUpdate,
  type Fence,
  type StoredFence,
} from '../../lib/fencing';
import { LockRedisError } from '../../lib/core';
import { CounterEntity, COUNTERS_DDL } from '../support/fencing-tables';
import { useFencingEnv } from '../support/fencing-env';

const env = useFencingEnv();

/** One storage under test: `write` sets the row's value with a fence; `read` returns value and fence. */
interface Adapter {
  write(id: string, value: number, fence: Fence): Promise<unknown>;
  read(id: string): Promise<{ value: number; fence: StoredFence } | null>;
  create(id: string): Promise<void>;
}

const drizzleCounters = pgTable('counters', {
  id: text('id').primaryKey(),
  value: integer('value').notNull(),
  lockFence: bigint('lock_fence', { mode: 'number' }).notNull(),
  lockOwner: text('lock_owner').notNull(),
});

let knex: Knex;
let orm: DataSource;
let sqlite: SqlJsDatabase;
const ledger = new MemoryFenceLedger();

beforeAll(async () => {
  knex = knexFactory({ client: 'pg', connection: env.postgres.url, pool: { min: 0, max: 2 } });
  orm = new DataSource({ type: 'postgres', url: env.postgres.url, entities: [CounterEntity], poolSize: 2 });
  await orm.initialize();
  const SQL = await initSqlJs();
  sqlite = new SQL.Database();
  sqlite.run(COUNTERS_DDL);
});
afterAll(async () => {
  await knex?.destroy();
  if (orm?.isInitialized) await orm.destroy();
  sqlite?.close();
});

const pgRead = async (id: string) => {
  const { rows } = await env.pool.query('SELECT value, lock_fence, lock_owner FROM counters WHERE id = $1', [
    id,
  ]);
  return rows[0]
    ? { value: rows[0].value, fence: { token: Number(rows[0].lock_fence), owner: rows[0].lock_owner } }
    : null;
};
const pgCreate = async (id: string) => {
  await env.pool.query('INSERT INTO counters (id, value) VALUES ($1, 0)', [id]);
};
/** sql.js: the SELECT's rows as objects; otherwise `{ changes }` from getRowsModified(). */
const sqliteQuery = (text: string, values: unknown[]) => {
  const params = values as SqlValue[];
  if (!text.startsWith('SELECT')) {
    sqlite.run(text, params);
    return { changes: sqlite.getRowsModified() };
  }
  const statement = sqlite.prepare(text, params);
  try {
    const rows: Record<string, unknown>[] = [];
    while (statement.step()) rows.push(statement.getAsObject());
    return rows;
  } finally {
    statement.free();
  }
};
const sqliteRow = (text: string, values: SqlValue[]) =>
  (sqliteQuery(text, values) as Record<string, unknown>[])[0];

const ADAPTERS: Record<string, () => Adapter> = {
  'SQL helper on PostgreSQL': () => ({
    write: (id, value, fence) =>
      fencedUpdate((t, v) => env.pool.query(t, v), {
        dialect: 'postgres',
        table: 'counters',
        set: { value },
        where: { id },
        fence,
      }),
    read: pgRead,
    create: pgCreate,
  }),
  'Knex on PostgreSQL': () => ({
    write: (id, value, fence) =>
      knexFencedUpdate(knex, { table: 'counters', where: { id }, set: { value }, fence }),
    read: pgRead,
    create: pgCreate,
  }),
  'Drizzle on PostgreSQL': () => ({
    write: (id, value, fence) =>
      drizzleFencedUpdate(drizzlePg(env.pool), {
        table: drizzleCounters,
        where: eq(drizzleCounters.id, id),
        set: { value },
        fence,
      }),
    read: pgRead,
    create: pgCreate,
  }),
  'TypeORM on PostgreSQL': () => ({
    write: (id, value, fence) =>
      typeormFencedUpdate(orm.getRepository(CounterEntity), { where: { id }, set: { value }, fence }),
    read: pgRead,
    create: pgCreate,
  }),
  'SQL helper on SQLite (sql.js)': () => ({
    write: (id, value, fence) =>
      fencedUpdate(sqliteQuery, {
        dialect: 'sqlite',
        table: 'counters',
        set: { value },
        where: { id },
        fence,
      }),
    read: async (id) => {
      const row = sqliteRow('SELECT value, lock_fence, lock_owner FROM counters WHERE id = ?', [id]) as
        { value: number; lock_fence: number; lock_owner: string } | undefined;
      return row ? { value: row.value, fence: { token: row.lock_fence, owner: row.lock_owner } } : null;
    },
    create: async (id) => {
      sqlite.run('INSERT INTO counters (id, value) VALUES (?, 0)', [id]);
    },
  }),
  'Redis fenced store': () => {
    const fenced = () => new RedisFencedStore(env.store);
    return {
      write: (id, value, fence) => fenced().set(`c:${id}`, String(value), fence),
      read: async (id) => {
        const value = await env.store.get(`c:${id}`);
        const fence = await fenced().storedFence(`c:${id}`);
        return value === null ? null : { value: Number(value), fence: fence ?? { token: 0, owner: '' } };
      },
      create: async (id) => {
        await env.store.set(`c:${id}`, '0');
      },
    };
  },
};

const T = 1_800_000_000_000_000; // a token of today's size (Redis server microseconds)
const a = (token: number): Fence => ({ key: 'k', token, owner: 'owner-a' });
const b = (token: number): Fence => ({ key: 'k', token, owner: 'owner-b' });

// [description, fence, accepted] in order, on one row that starts at fence 0.
const CASES: [string, Fence, boolean][] = [
  ['a first write', a(T), true],
  ['the same grant again (re-entry, several writes)', a(T), true],
  ['an equal token from another owner', b(T), false],
  ['a lower token', b(T - 1), false],
  ['a higher token from another owner', b(T + 5), true],
  ['the earlier grant after it', a(T), false],
  ['the later grant again', b(T + 5), true],
];

describe.each(Object.keys(ADAPTERS))('%s', (name) => {
  const adapter = ADAPTERS[name]!();
  const id = `rule-${name.replace(/\W+/g, '-')}`;

  it('accepts and refuses exactly as the rule says, writing nothing when it refuses', async () => {
    await adapter.create(id);
    let stored: StoredFence | null = null;
    let value = 0;
    for (const [what, fence, accepted] of CASES) {
      expect([what, admitsFence(stored, fence)]).toEqual([what, accepted]);
      const next = value + 1;
      const outcome = await adapter.write(id, next, fence).then(
        () => 'written',
        (error: unknown) => error,
      );
      if (accepted) {
        expect([what, outcome]).toEqual([what, 'written']);
        value = next;
        stored = { token: fence.token, owner: fence.owner };
      } else {
        expect(outcome).toBeInstanceOf(StaleFenceError);
        const error = outcome as StaleFenceError;
        expect([what, error.token, Number(error.storedFence), error.storedOwner]).toEqual([
          what,
          fence.token,
          Number(stored!.token),
          stored!.owner,
        ]);
      }
      expect(await adapter.read(id)).toEqual({ value, fence: stored });
    }
  });

  if (!name.startsWith('Redis')) {
    it('writes no row when the row does not exist (0 rows)', async () => {
      await expect(adapter.write(`${id}-missing`, 1, a(T))).resolves.toBe(0);
    });
  }
});

describe('the in-process ledger (HTTP guard)', () => {
  it('admits and refuses as the rule says', async () => {
    let stored: StoredFence | null = null;
    for (const [what, fence, accepted] of CASES) {
      const outcome = await ledger.admit('resource', fence).then(
        () => true,
        (error: unknown) => (error instanceof StaleFenceError ? false : error),
      );
      expect([what, outcome]).toEqual([what, accepted]);
      if (accepted) stored = { token: fence.token, owner: fence.owner };
      expect(ledger.storedFence('resource')).toEqual(stored);
    }
  });
});

describe('RedisFencedStore with fenceKey', () => {
  it('keeps the fence record where fenceKey names it (e.g. with a Cluster hash tag)', async () => {
    const store = new RedisFencedStore(env.store, { fenceKey: (key) => `{${key}}:fence-record` });
    const key = `tagged:${Date.now()}`;
    await store.set(key, 'v1', { key: 'lock', token: 7, owner: 'a' });
    expect(await env.store.hget(`{${key}}:fence-record`, 'fence')).toBe('7');
    expect(await env.store.exists(`${key}:fence`)).toBe(0);
    expect(await store.storedFence(key)).toEqual({ token: 7, owner: 'a' });
    await expect(store.set(key, 'v0', { key: 'lock', token: 6, owner: 'b' })).rejects.toBeInstanceOf(
      StaleFenceError,
    );
    expect(await env.store.get(key)).toBe('v1');
  });
});

describe('RedisFencedStore on the core script path', () => {
  it('writes after SCRIPT FLUSH (EVAL once after NOSCRIPT), then by EVALSHA again', async () => {
    const store = new RedisFencedStore(env.store);
    const key = `flushed:${Date.now()}`;
    await store.set(key, 'v1', { key: 'lock', token: 3, owner: 'a' });
    await env.store.script('FLUSH');
    await env.store.config('RESETSTAT');
    await store.set(key, 'v2', { key: 'lock', token: 4, owner: 'a' });
    await store.set(key, 'v3', { key: 'lock', token: 5, owner: 'a' });
    expect(await env.store.get(key)).toBe('v3');
    const stats = await env.store.info('commandstats');
    const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    // The first write after the flush: EVALSHA (NOSCRIPT), then EVAL; the next one EVALSHA only.
    expect([calls('evalsha'), calls('eval')]).toEqual([2, 1]);
  });

  it('takes a node-redis client, adding no listener to it', async () => {
    const client = createClient({ url: env.storeServer.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const listeners = client.listenerCount('error');
      const store = new RedisFencedStore(client);
      const key = `node-redis:${Date.now()}`;
      await store.hset(key, { status: 'paid' }, { key: 'lock', token: 9, owner: 'a' });
      await expect(
        store.hset(key, { status: 'void' }, { key: 'lock', token: 8, owner: 'b' }),
      ).rejects.toBeInstanceOf(StaleFenceError);
      expect(await client.hGet(key, 'status')).toBe('paid');
      expect(await store.storedFence(key)).toEqual({ token: 9, owner: 'a' });
      expect(client.listenerCount('error')).toBe(listeners);
    } finally {
      await client.quit();
    }
  });

  it('fails a write Redis cannot take with LockRedisError, keeping the client error as cause', async () => {
    const offline = new Redis(env.storeServer.url, { lazyConnect: true, enableOfflineQueue: false });
    try {
      const store = new RedisFencedStore(offline);
      const failed = await store
        .set('offline:1', 'v', { key: 'lock', token: 1, owner: 'a' })
        .catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(LockRedisError);
      expect((failed as Error).message).toMatch(/^Redis failed during fenced-write: /);
      expect((failed as Error).cause).toBeInstanceOf(Error);
      const read = await store.storedFence('offline:1').catch((e: unknown) => e);
      expect(read).toBeInstanceOf(LockRedisError);
    } finally {
      offline.disconnect();
    }
  });

  it('refuses a commandTimeoutMs that is not a positive integer, before any I/O', () => {
    expect(() => new RedisFencedStore(env.store, { commandTimeoutMs: 0 })).toThrow(
      'commandTimeoutMs must be a positive integer, got 0',
    );
  });
});
