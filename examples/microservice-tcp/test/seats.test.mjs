import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { firstValueFrom } from 'rxjs';
import { freePort, startApp, startRedis } from '../../support/servers.mjs';

const require = createRequire(import.meta.url);
const { ClientProxyFactory, Transport } = require('@nestjs/microservices');

let redis;
let app;
let client;

before(async () => {
  redis = await startRedis();
  const port = await freePort();
  app = await startApp({ PORT: String(port), REDIS_URL: redis.url });
  client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
  await client.connect();
});

after(async () => {
  await client?.close();
  await app?.stop();
  await redis?.stop();
});

/** The handler's answer, or the error object the client's Observable errored with. */
const book = (seat, customer) =>
  firstValueFrom(client.send('book', { seat, customer })).then(
    (value) => ({ value }),
    (error) => ({ error }),
  );

test('books a free seat', async () => {
  assert.deepEqual(await book('1A', 'zoe'), { value: { seat: '1A', customer: 'zoe' } });
});

test('two bookings of one seat at once: one books it, the other is told LOCKED with a retry time', async () => {
  const [first, second] = await Promise.all([book('12A', 'ann'), book('12A', 'bob')]);
  const answers = [first, second];
  const booked = answers.filter((answer) => answer.value);
  const locked = answers.filter((answer) => answer.error);
  assert.equal(booked.length, 1, JSON.stringify(answers));
  assert.equal(locked.length, 1, JSON.stringify(answers));
  assert.equal(locked[0].error.code, 'LOCKED');
  assert.equal(typeof locked[0].error.retryAfterMs, 'number');
  assert.ok(!JSON.stringify(locked[0].error).includes('12A'), 'no lock key leaves the process');

  // Retried after the first booking ended: the seat is taken (the app's own error, not a lock error).
  const retried = await book('12A', locked[0] === second ? 'bob' : 'ann');
  assert.equal(retried.error?.code, 'TAKEN');
  // Another seat is not held up.
  assert.deepEqual((await book('12B', 'cy')).value, { seat: '12B', customer: 'cy' });
});
