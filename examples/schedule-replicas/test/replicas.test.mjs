import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import Redis from 'ioredis';
import { startApp, startRedis } from '../../support/servers.mjs';

let redis;
let client;
const replicas = [];

before(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});

after(async () => {
  for (const replica of replicas) await replica.stop();
  client?.disconnect();
  await redis?.stop();
});

test('two replicas (two processes) run the job once per tick', async () => {
  const ready = /replica \d+ started/;
  replicas.push(await startApp({ REDIS_URL: redis.url }, { ready }));
  replicas.push(await startApp({ REDIS_URL: redis.url }, { ready }));
  await client.del('digest:runs');
  await sleep(8_000);
  for (const replica of replicas.splice(0)) {
    const { code, signal } = await replica.stop();
    assert.ok(code === 0 || signal === 'SIGTERM', `exit ${code ?? signal}:\n${replica.output()}`);
  }

  const runs = (await client.lrange('digest:runs', 0, -1)).map((line) => line.split(' '));
  const ticks = runs.map(([tick]) => tick);
  const perReplica = {};
  for (const [, pid] of runs) perReplica[pid] = (perReplica[pid] ?? 0) + 1;
  console.log(
    `${runs.length} runs in ${new Set(ticks).size} ticks; runs per replica: ${JSON.stringify(perReplica)}`,
  );
  assert.ok(runs.length >= 4, `only ${runs.length} runs in 8 s`);
  // Once per tick: no second appears twice.
  assert.equal(new Set(ticks).size, ticks.length, `a tick ran twice: ${ticks.join(', ')}`);
});
