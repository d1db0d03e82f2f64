import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { freePort, startApp, startPostgres, startRedis } from '../../support/servers.mjs';

let redis;
let postgres;
let db;
const apps = [];

before(async () => {
  redis = await startRedis();
  postgres = await startPostgres();
  db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
});

after(async () => {
  for (const app of apps) await app.stop();
  await db?.end();
  await postgres?.stop();
  await redis?.stop();
});

async function replica(env = {}) {
  const port = await freePort();
  // A 1 s watchdog lease, so that a holder paused for 3 s loses its lock within the test.
  const app = await startApp({
    PORT: String(port),
    REDIS_URL: redis.url,
    DATABASE_URL: postgres.url,
    LOCK_LEASE_MS: '1000',
    ...env,
  });
  apps.push(app);
  return { app, url: (route) => `http://127.0.0.1:${port}${route}` };
}

const json = (method, body) => ({
  method,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

test('a holder paused past its lease: its late write is refused, the next holder keeps its write', async () => {
  const paused = await replica({ SLOW_STEP_MS: '1500' });
  const next = await replica();
  assert.equal((await fetch(next.url('/stock/lamp'), json('PUT', { qty: 10 }))).status, 200);

  // The first holder claims the row (lock_fence > 0), then is stopped (SIGSTOP) in its slow step.
  const late = fetch(paused.url('/stock/lamp/take'), json('POST', { n: 3 }));
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.query("SELECT lock_fence FROM stock WHERE sku = 'lamp'");
    if (Number(rows[0].lock_fence) > 0) break;
    await sleep(25);
  }
  const { rows: claimed } = await db.query("SELECT lock_fence FROM stock WHERE sku = 'lamp'");
  assert.ok(Number(claimed[0].lock_fence) > 0, 'the first holder never claimed the row');
  paused.app.child.kill('SIGSTOP');
  try {
    // Its lease runs out; the other replica gets the lock with a higher fencing token and writes.
    await sleep(3000);
    const taken = await fetch(next.url('/stock/lamp/take'), json('POST', { n: 2 }));
    assert.equal(taken.status, 201);
    assert.deepEqual(await taken.json(), { sku: 'lamp', left: 8 });
  } finally {
    paused.app.child.kill('SIGCONT');
  }

  // The paused holder wakes up and tries to write 10 - 3: refused, nothing written.
  const refused = await late;
  assert.equal(refused.status, 409);
  const { rows } = await db.query("SELECT qty, lock_fence FROM stock WHERE sku = 'lamp'");
  console.log(
    `paused holder: ${refused.status} ${JSON.stringify(await refused.json())}; row: ${JSON.stringify(rows[0])}`,
  );
  assert.equal(rows[0].qty, 8);
  assert.ok(Number(rows[0].lock_fence) > Number(claimed[0].lock_fence));
});

test('takes from two replicas at once: every take counted once', async () => {
  const a = await replica();
  const b = await replica();
  assert.equal((await fetch(a.url('/stock/desk'), json('PUT', { qty: 40 }))).status, 200);
  const statuses = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      fetch((i % 2 ? a : b).url('/stock/desk/take'), json('POST', { n: 1 })).then((r) => r.status),
    ),
  );
  assert.deepEqual([...new Set(statuses)], [201]);
  assert.equal((await (await fetch(b.url('/stock/desk'))).json()).qty, 10);
});
