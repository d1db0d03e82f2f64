import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { startApp, startRedis } from '../../support/servers.mjs';

let redis;
let client;
let queue;
const workers = [];

before(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
  queue = new Queue('transfers', { connection: { host: '127.0.0.1', port: redis.port } });
});

after(async () => {
  for (const worker of workers) await worker.stop();
  await queue?.close();
  client?.disconnect();
  await redis?.stop();
});

test('200 deposits on 2 accounts by two worker processes (10 jobs at a time each): no update lost', async () => {
  const ready = /worker \d+ started/;
  workers.push(await startApp({ REDIS_URL: redis.url }, { ready }));
  workers.push(await startApp({ REDIS_URL: redis.url }, { ready }));

  const jobs = Array.from({ length: 200 }, (_, i) => ({
    name: 'deposit',
    data: { account: i % 2 === 0 ? 'alice' : 'bob', amount: 1 + (i % 5) },
  }));
  await queue.addBulk(jobs);
  const expected = { alice: 0, bob: 0 };
  for (const { data } of jobs) expected[data.account] += data.amount;

  for (let i = 0; i < 600; i++) {
    const counts = await queue.getJobCounts('completed', 'failed');
    if (counts.completed + counts.failed === jobs.length) break;
    await sleep(100);
  }
  const counts = await queue.getJobCounts('completed', 'failed');
  console.log(`jobs completed ${counts.completed}, failed ${counts.failed}`);
  assert.deepEqual(counts, { completed: 200, failed: 0 });
  assert.equal(Number(await client.get('balance:alice')), expected.alice);
  assert.equal(Number(await client.get('balance:bob')), expected.bob);

  for (const worker of workers.splice(0)) {
    const { code, signal } = await worker.stop();
    assert.ok(code === 0 || signal === 'SIGTERM', `exit ${code ?? signal}:\n${worker.output()}`);
  }
});
