import { createLockEngine, LockEngine } from '../../lib/core/public';
import { FencedStore, StaleFenceError } from '../../sample-app/inventory/fenced-store';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import {
  closeApps,
  E2E_LOCK_PREFIX,
  startSampleAppUnderTest,
  type SampleAppUnderTest,
} from '../support/sample-app-under-test';

jest.setTimeout(120_000);

let redis: RedisServerProcess;
let replicas: SampleAppUnderTest[] = [];
let elsewhere: LockEngine | undefined;

beforeAll(async () => {
  redis = await startRedis();
  replicas = await Promise.all([1, 2].map(() => startSampleAppUnderTest(redis.url)));
  elsewhere = createLockEngine({ redis: redis.url, keyPrefix: E2E_LOCK_PREFIX });
});

afterAll(async () => {
  await elsewhere?.close();
  await closeApps(replicas);
  await redis?.stop();
});

const pick = <T>(items: readonly T[], i: number): T => items[i % items.length];

describe('inventory: locking by hand with DistributedLockService', () => {
  it('keeps every concurrent restock (no lost update)', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        pick(replicas, i)
          .http.post('/inventory/bolt/restock')
          .send({ qty: 1 + (i % 3) }),
      ),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const expected = Array.from({ length: 30 }, (_, i) => 1 + (i % 3)).reduce((a, b) => a + b, 0);
    const record = await replicas[0].http.get('/inventory/bolt').expect(200);
    expect(record.body.qty).toBe(expected);
  });

  it('keeps the total constant under concurrent transfers in every direction, without deadlock', async () => {
    const skus = ['red', 'green', 'blue'];
    await Promise.all(
      skus.map((sku) => replicas[0].http.post(`/inventory/${sku}/restock`).send({ qty: 100 }).expect(200)),
    );
    const pairs = [
      ['red', 'green'],
      ['green', 'red'],
      ['green', 'blue'],
      ['blue', 'green'],
      ['blue', 'red'],
      ['red', 'blue'],
    ];
    const answers = await Promise.all(
      Array.from({ length: 48 }, (_, i) => {
        const [from, to] = pick(pairs, i);
        return pick(replicas, i >> 1)
          .http.post('/inventory/transfer')
          .send({ from, to, qty: 1 + (i % 7) * 6 });
      }),
    );
    // 200, or 409 when the source ran short; never 423 (opposite transfers would deadlock without lock ordering).
    expect(
      answers.filter((r) => r.status !== 200 && r.status !== 409).map((r) => [r.status, r.body]),
    ).toEqual([]);
    expect(answers.filter((r) => r.status === 200).length).toBeGreaterThan(0);

    const records = await Promise.all(
      skus.map((sku) => replicas[1].http.get(`/inventory/${sku}`).expect(200)),
    );
    const total = records.reduce((sum, r) => sum + r.body.qty, 0);
    expect(total).toBe(300);
    for (const r of records) expect(r.body.qty).toBeGreaterThanOrEqual(0);
  });

  it('answers 409 for a transfer larger than the source holds, and changes nothing', async () => {
    const http = replicas[0].http;
    await http.post('/inventory/nut/restock').send({ qty: 3 }).expect(200);
    const answer = await http
      .post('/inventory/transfer')
      .send({ from: 'nut', to: 'washer', qty: 4 })
      .expect(409);
    expect(answer.body).toMatchObject({ error: 'Insufficient Stock' });
    expect((await http.get('/inventory/nut')).body.qty).toBe(3);
    expect((await http.get('/inventory/washer')).body).toEqual({ sku: 'washer', qty: 0, fence: 0 });
  });

  it('answers 423 when a SKU lock is held elsewhere longer than the wait', async () => {
    const app = await startSampleAppUnderTest(redis.url, { lockWaitMs: 300 });
    const held = await elsewhere!.acquire('inventory:gear', { leaseMs: 60_000 });
    try {
      const busy = await app.http.post('/inventory/gear/restock').send({ qty: 1 }).expect(423);
      expect(busy.headers['retry-after']).toBeDefined();
      await app.http.post('/inventory/transfer').send({ from: 'gear', to: 'cog', qty: 1 }).expect(423);
    } finally {
      await held.release();
      await app.close();
    }
  });
});

describe('inventory: the fenced store', () => {
  it('records the fencing token of each write, increasing per SKU', async () => {
    const http = replicas[0].http;
    const first = (await http.post('/inventory/spring/restock').send({ qty: 1 }).expect(200)).body;
    const second = (await http.post('/inventory/spring/restock').send({ qty: 1 }).expect(200)).body;
    expect(first.fence).toBeGreaterThan(0);
    expect(second.fence).toBeGreaterThan(first.fence);
    expect((await http.get('/inventory/spring')).body).toEqual({
      sku: 'spring',
      qty: 2,
      fence: second.fence,
    });
  });

  it('rejects the late write of a holder whose lease ran out after a newer holder wrote', async () => {
    const http = replicas[0].http;
    // A holder elsewhere takes the lock with a short lease, then "pauses" past it.
    const stale = await elsewhere!.acquire('inventory:valve', { leaseMs: 200 });
    await waitUntil(() => stale.signal.aborted, {
      description: 'the stale holder to learn its lease ran out',
    });

    const fresh = (await http.post('/inventory/valve/restock').send({ qty: 5 }).expect(200)).body;
    expect(fresh.fence).toBeGreaterThan(stale.fencingToken);

    // The paused holder wakes up and writes with its old token: the storage refuses it.
    const store = replicas[0].app.get(FencedStore);
    const late = store.write([{ sku: 'valve', qty: 999, token: stale.fencingToken }]);
    await expect(late).rejects.toBeInstanceOf(StaleFenceError);
    await expect(late).rejects.toMatchObject({
      sku: 'valve',
      token: stale.fencingToken,
      lastToken: fresh.fence,
    });
    expect((await http.get('/inventory/valve')).body).toEqual({ sku: 'valve', qty: 5, fence: fresh.fence });
    expect(await stale.release()).toBe(false);
  });

  it('writes nothing when one entry of a multi-SKU write is stale', async () => {
    const http = replicas[0].http;
    const a = (await http.post('/inventory/pipe/restock').send({ qty: 10 }).expect(200)).body;
    const store = replicas[0].app.get(FencedStore);
    await expect(
      store.write([
        { sku: 'hose', qty: 7, token: a.fence + 1 },
        { sku: 'pipe', qty: 0, token: a.fence - 1 },
      ]),
    ).rejects.toBeInstanceOf(StaleFenceError);
    expect((await http.get('/inventory/hose')).body).toEqual({ sku: 'hose', qty: 0, fence: 0 });
    expect((await http.get('/inventory/pipe')).body).toEqual({ sku: 'pipe', qty: 10, fence: a.fence });
  });
});
