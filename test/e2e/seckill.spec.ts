import { createLockEngine, LockEngine } from '../../lib/core/public';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { InterleavingBarrier } from '../support/interleaving-barrier';
import {
  closeApps,
  E2E_LOCK_PREFIX,
  startSampleAppUnderTest,
  type SampleAppUnderTest,
} from '../support/sample-app-under-test';

jest.setTimeout(120_000);

let redis: RedisServerProcess;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

describe('seckill: the decorated purchase route', () => {
  let replicas: SampleAppUnderTest[] = [];

  beforeAll(async () => {
    // Two instances of the app on one Redis: two lock engines, two HTTP servers, as two pods would be.
    replicas = await Promise.all([1, 2].map(() => startSampleAppUnderTest(redis.url, { seckillDelayMs: 2 })));
  });

  afterAll(async () => {
    await closeApps(replicas);
  });

  it('sells exactly the stock under many concurrent buyers spread over two app instances', async () => {
    const [a, b] = replicas;
    await a.http
      .put('/seckill/phone')
      .send({ stock: 20 })
      .expect(200, { itemId: 'phone', stock: 20, sold: 0 });

    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).http.post('/seckill/phone')),
    );

    const bought = answers.filter((r) => r.status === 200);
    const soldOut = answers.filter((r) => r.status === 409);
    expect(bought).toHaveLength(20);
    expect(soldOut).toHaveLength(40);
    // Every unit was sold exactly once: the `sold` counters seen by buyers are 1..20, no repeats.
    expect(bought.map((r) => r.body.sold).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(soldOut[0].body).toMatchObject({ statusCode: 409, error: 'Sold Out', itemId: 'phone' });
    await b.http.get('/seckill/phone').expect(200, { itemId: 'phone', stock: 0, sold: 20 });
  });

  it('answers 409 with a clear body, not a 5xx, when the item is sold out', async () => {
    const [a] = replicas;
    await a.http.put('/seckill/empty').send({ stock: 0 }).expect(200);
    const answer = await a.http.post('/seckill/empty').expect(409);
    expect(answer.body).toEqual({
      statusCode: 409,
      error: 'Sold Out',
      message: 'Item "empty" is sold out',
      itemId: 'empty',
    });
  });

  it('refuses a malformed reset or item id with 400 and touches nothing', async () => {
    const [a] = replicas;
    await a.http.put('/seckill/tv').send({ stock: 3 }).expect(200);
    for (const stock of [-1, 1.5, '3', null]) {
      const answer = await a.http.put('/seckill/tv').send({ stock }).expect(400);
      expect(answer.body.message).toMatch(/"stock" must be a whole number/);
    }
    await a.http.post('/seckill/bad%7Bid%7D').expect(400);
    await a.http.get('/seckill/tv').expect(200, { itemId: 'tv', stock: 3, sold: 0 });
  });
});

describe('seckill: busy lock', () => {
  let app: SampleAppUnderTest | undefined;
  let elsewhere: LockEngine | undefined;

  beforeAll(async () => {
    app = await startSampleAppUnderTest(redis.url, { lockWaitMs: 300 });
    // Another process's lock engine on the same Redis and key space.
    elsewhere = createLockEngine({ redis: redis.url, keyPrefix: E2E_LOCK_PREFIX });
  });

  afterAll(async () => {
    await elsewhere?.close();
    await closeApps([app]);
  });

  it('answers 423 with Retry-After while the item lock is held elsewhere, and sells once it is free', async () => {
    const http = app!.http;
    await http.put('/seckill/console').send({ stock: 5 }).expect(200);
    const held = await elsewhere!.acquire('seckill:console', { leaseMs: 60_000 });
    try {
      const busy = await http.post('/seckill/console').expect(423);
      expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      await http.get('/seckill/console').expect(200, { itemId: 'console', stock: 5, sold: 0 });
    } finally {
      expect(await held.release()).toBe(true);
    }
    await http.post('/seckill/console').expect(200, { itemId: 'console', stock: 4, sold: 1 });
  });
});

describe('seckill: what the lock prevents', () => {
  // The pause between read and write holds each purchase until 3 are inside it at once; with
  // the lock only one can ever be inside, so there it times out and lets the purchase go on.
  const forcedRace = (): InterleavingBarrier => new InterleavingBarrier(3, 1_000);

  it('the unsafe route oversells when three purchases interleave', async () => {
    const barrier = forcedRace();
    const app = await startSampleAppUnderTest(redis.url, { pause: barrier });
    try {
      await app.http.put('/seckill/race-unsafe').send({ stock: 1 }).expect(200);
      const answers = await Promise.all([1, 2, 3].map(() => app.http.post('/seckill/race-unsafe/unsafe')));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(barrier.peakInside).toBe(3);
      // One unit on sale, three sold: all three read stock 1 before anyone wrote.
      await app.http.get('/seckill/race-unsafe').expect(200, { itemId: 'race-unsafe', stock: 0, sold: 3 });
    } finally {
      await app.close();
    }
  });

  it('the locked route sells one unit under the same forced interleaving', async () => {
    const barrier = forcedRace();
    const app = await startSampleAppUnderTest(redis.url, { pause: barrier });
    try {
      await app.http.put('/seckill/race-locked').send({ stock: 1 }).expect(200);
      const answers = await Promise.all([1, 2, 3].map(() => app.http.post('/seckill/race-locked')));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      expect(barrier.peakInside).toBe(1);
      await app.http.get('/seckill/race-locked').expect(200, { itemId: 'race-locked', stock: 0, sold: 1 });
    } finally {
      await app.close();
    }
  });
});
