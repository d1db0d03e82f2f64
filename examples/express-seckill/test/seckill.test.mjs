import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { freePort, startApp, startRedis } from '../../support/servers.mjs';

let redis;
const apps = [];
const ports = [];

before(async () => {
  redis = await startRedis();
  // Two replicas of the app on one Redis.
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    apps.push(await startApp({ PORT: String(port), REDIS_URL: redis.url }));
    ports.push(port);
  }
});

after(async () => {
  for (const app of apps) await app.stop();
  await redis?.stop();
});

const url = (i, route) => `http://127.0.0.1:${ports[i % ports.length]}${route}`;

test('20 items, 100 buyers on two replicas: 20 sold, 80 told sold out, none oversold', async () => {
  const put = await fetch(url(0, '/items/phone/stock'), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ count: 20 }),
  });
  assert.equal(put.status, 200);

  const statuses = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      fetch(url(i, '/items/phone/buy'), { method: 'POST' }).then((r) => r.status),
    ),
  );
  const sold = statuses.filter((s) => s === 201).length;
  const soldOut = statuses.filter((s) => s === 409).length;
  console.log(`statuses: ${sold} x 201, ${soldOut} x 409`);
  assert.equal(sold, 20);
  assert.equal(soldOut, 80);

  const stock = await (await fetch(url(1, '/items/phone/stock'))).json();
  assert.equal(stock.count, 0);
});

test('the app stops on SIGTERM and leaves no lock in Redis', async () => {
  const { default: Redis } = await import('ioredis');
  for (const app of apps.splice(0)) {
    const { code, signal } = await app.stop();
    assert.ok(code === 0 || signal === 'SIGTERM', `exit ${code ?? signal}:\n${app.output()}`);
  }
  const client = new Redis(redis.url);
  try {
    // Left: the app's stock, and the key's fencing counter (kept so that tokens keep rising).
    const keys = await client.keys('*');
    assert.deepEqual(
      keys.filter((key) => !key.startsWith('stock:') && !key.endsWith(':fence')),
      [],
    );
  } finally {
    client.disconnect();
  }
});
