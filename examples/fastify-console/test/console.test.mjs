import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { freePort, startApp, startRedis } from '../../support/servers.mjs';

const TOKEN = 'test-operator-token';
let redis;
let app;
let base;

before(async () => {
  redis = await startRedis();
  const port = await freePort();
  app = await startApp({ PORT: String(port), REDIS_URL: redis.url, OPERATOR_TOKEN: TOKEN });
  base = `http://127.0.0.1:${port}`;
});

after(async () => {
  await app?.stop();
  await redis?.stop();
});

const operator = { authorization: `Bearer ${TOKEN}` };

test('the console answers operators only', async () => {
  assert.equal((await fetch(`${base}/locks`)).status, 401);
  assert.equal(
    (await fetch(`${base}/locks/api/locks`, { headers: { authorization: 'Bearer wrong' } })).status,
    401,
  );
  const page = await fetch(`${base}/locks`, { headers: operator });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /text\/html/);
});

test('an operator sees a running build and force-releases it; the build stops', async () => {
  const build = fetch(`${base}/reports/q3`, { method: 'POST' });

  // The console lists a lock once it has been held ~250-500 ms.
  let listed;
  for (let i = 0; i < 100 && !listed; i++) {
    const { locks } = await (await fetch(`${base}/locks/api/locks`, { headers: operator })).json();
    listed = locks.find((lock) => lock.key === 'report:q3');
    if (!listed) await sleep(100);
  }
  assert.ok(listed, 'report:q3 never appeared in the console');
  assert.equal(listed.holders.length, 1);
  assert.ok(listed.holders[0].fencingToken > 0);

  // A second build of the same report while the first runs: 423 Locked.
  assert.equal((await fetch(`${base}/reports/q3`, { method: 'POST' })).status, 423);

  // Without a reason the release is refused; with one it goes through.
  const release = (body) =>
    fetch(`${base}/locks/api/locks/${encodeURIComponent('report:q3')}/release`, {
      method: 'POST',
      headers: { ...operator, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  assert.equal((await release({})).status, 400);
  const released = await release({ reason: 'stuck build' });
  assert.equal(released.status, 200);
  assert.deepEqual(await released.json(), { key: 'report:q3', released: true });

  // The build saw its lock go and stopped with a 409.
  const stopped = await build;
  assert.equal(stopped.status, 409);
  assert.match((await stopped.json()).message, /lock lost/);

  // The report can be built again (a new holder, a higher fencing token).
  const next = fetch(`${base}/reports/q3`, { method: 'POST' });
  let shown;
  for (let i = 0; i < 100 && !shown?.lock?.holders[0]?.fencingToken; i++) {
    if (i > 0) await sleep(100);
    shown = await (
      await fetch(`${base}/locks/api/locks/${encodeURIComponent('report:q3')}`, { headers: operator })
    ).json();
  }
  assert.ok(shown.lock.holders[0].fencingToken > listed.holders[0].fencingToken, JSON.stringify(shown));
  // The audit log names the operator and the reason.
  assert.equal(shown.forceReleases[0].reason, 'stuck build');
  assert.equal(shown.forceReleases[0].by, 'operator');
  await release({ reason: 'end of test' });
  assert.equal((await next).status, 409);
});
