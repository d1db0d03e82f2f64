/*
 * The sample app's inventory on PostgreSQL: the real AppModule with DATABASE_URL set (two replicas,
 * one Redis for the locks, a PostgreSQL the harness starts), its writes going through the fencing SQL
 * helper with the fence the store takes from the async context (currentFence). Concurrent restocks
 * lose no unit; concurrent transfers never oversell; the fence columns hold the last writer's token;
 * a holder whose lease ran out is refused by the table; nothing is written to Redis.
 */
import Redis from 'ioredis';
import { Pool } from 'pg';
import { createLockEngine, type LockEngine } from '../../lib/core/public';
import { fencedUpdate, fenceOf, StaleFenceError } from '../../lib/fencing';
import { startPostgres, type PostgresServer } from '../support/postgres';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import {
  closeApps,
  E2E_LOCK_PREFIX,
  E2E_PREFIX,
  startSampleAppUnderTest,
  type SampleAppUnderTest,
} from '../support/sample-app-under-test';

jest.setTimeout(120_000);

let redis: RedisServerProcess;
let postgres: PostgresServer;
let pool: Pool;
/** Errors of the spec's own idle connections (an unhandled pool 'error' would crash the worker). */
const poolErrors: string[] = [];
let replicas: SampleAppUnderTest[] = [];
let elsewhere: LockEngine | undefined;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  // Both replicas start together: each creates the table if missing (serialized in the store).
  replicas = await Promise.all(
    [1, 2].map(() => startSampleAppUnderTest(redis.url, { databaseUrl: postgres.url })),
  );
  pool = new Pool({ connectionString: postgres.url, max: 2 });
  pool.on('error', (error) => poolErrors.push(error.message));
  elsewhere = createLockEngine({ redis: redis.url, keyPrefix: E2E_LOCK_PREFIX });
}, 90_000);

afterAll(async () => {
  await elsewhere?.close();
  await closeApps(replicas);
  await pool?.end();
  await Promise.allSettled([redis?.stop(), postgres?.stop()]);
}, 60_000);

const pick = <T>(items: readonly T[], i: number): T => items[i % items.length]!;

async function row(sku: string): Promise<{ qty: number; lock_fence: string; lock_owner: string }> {
  const { rows } = await pool.query('SELECT qty, lock_fence, lock_owner FROM inventory WHERE sku = $1', [
    sku,
  ]);
  expect(rows).toHaveLength(1);
  return rows[0];
}

describe('inventory on PostgreSQL (DATABASE_URL), through the fencing SQL helper', () => {
  it('keeps every unit of concurrent restocks, and the row holds the last writer’s token', async () => {
    const N = 40;
    const amounts = Array.from({ length: N }, (_, i) => 1 + (i % 3));
    const answers = await Promise.all(
      amounts.map((qty, i) => pick(replicas, i).http.post('/inventory/bolt/restock').send({ qty })),
    );
    expect(answers.filter((r) => r.status !== 200).map((r) => [r.status, r.body])).toEqual([]);
    const writes = answers.map((r) => r.body as { qty: number; fence: number });

    // In token order each write saw the one before it: quantities rise by the amounts, none lost.
    const byToken = [...writes].sort((a, b) => a.fence - b.fence);
    expect(new Set(byToken.map((w) => w.fence)).size).toBe(N);
    for (let i = 1; i < N; i++) expect(byToken[i]!.qty).toBeGreaterThan(byToken[i - 1]!.qty);
    const total = amounts.reduce((a, b) => a + b, 0);
    expect(byToken[N - 1]!.qty).toBe(total);

    const stored = await row('bolt');
    expect(stored.qty).toBe(total);
    expect(stored.lock_fence).toBe(String(byToken[N - 1]!.fence));
    expect(stored.lock_owner).toMatch(/^\d+\.[\w-]+$/);
    expect((await replicas[1]!.http.get('/inventory/bolt').expect(200)).body).toEqual({
      sku: 'bolt',
      qty: total,
      fence: byToken[N - 1]!.fence,
    });
  });

  it('never oversells: concurrent transfers move exactly the stock there is', async () => {
    await replicas[0]!.http.post('/inventory/crate/restock').send({ qty: 50 }).expect(200);
    const N = 40; // 40 × 2 units asked of 50: 25 succeed, 15 are refused
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        pick(replicas, i).http.post('/inventory/transfer').send({ from: 'crate', to: 'shelf', qty: 2 }),
      ),
    );
    expect(answers.filter((r) => r.status !== 200 && r.status !== 409).map((r) => r.status)).toEqual([]);
    const moved = answers.filter((r) => r.status === 200);
    expect(moved).toHaveLength(25);
    for (const r of answers.filter((a) => a.status === 409)) {
      expect(r.body).toMatchObject({ error: 'Insufficient Stock' });
    }

    const [crate, shelf] = [await row('crate'), await row('shelf')];
    expect([crate.qty, shelf.qty]).toEqual([0, 50]);
    // The last transfer that moved units wrote both rows, each with its own key's token.
    const last = moved
      .map((r) => r.body as { from: { qty: number; fence: number }; to: { qty: number; fence: number } })
      .sort((a, b) => a.to.fence - b.to.fence)
      .pop()!;
    expect(last.to.qty).toBe(50);
    expect(shelf.lock_fence).toBe(String(last.to.fence));
    // A refused transfer rolled its claim back: crate's fence is the last transfer that moved units.
    expect(crate.lock_fence).toBe(String(last.from.fence));
  });

  it('refuses the late write of a holder whose lease ran out, keeping its successor’s', async () => {
    const stale = await elsewhere!.acquire('inventory:valve', { leaseMs: 200 });
    const staleFence = fenceOf(stale);
    await waitUntil(() => stale.signal.aborted, {
      description: 'the stale holder to learn its lease ran out',
    });
    const fresh = (await replicas[0]!.http.post('/inventory/valve/restock').send({ qty: 5 }).expect(200))
      .body;
    expect(fresh.fence).toBeGreaterThan(stale.fencingToken);

    // It checked its signal just before it paused, then writes with its old token: the table refuses.
    const late = fencedUpdate((t, v) => pool.query(t, v), {
      dialect: 'postgres',
      table: 'inventory',
      set: { qty: 999 },
      where: { sku: 'valve' },
      fence: { key: staleFence.key, token: staleFence.token, owner: staleFence.owner },
    });
    await expect(late).rejects.toBeInstanceOf(StaleFenceError);
    await expect(late).rejects.toMatchObject({ storedFence: fresh.fence });
    expect(await row('valve')).toMatchObject({ qty: 5, lock_fence: String(fresh.fence) });
    expect(await stale.release()).toBe(false);
  });

  it('keeps the inventory out of Redis', async () => {
    const admin = new Redis(redis.url);
    try {
      expect(await admin.keys(`${E2E_PREFIX}inventory:*`)).toEqual([]);
      expect(poolErrors).toEqual([]);
    } finally {
      await admin.quit();
    }
  });
});
