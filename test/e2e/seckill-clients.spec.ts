/*
 * The sample app as a team that already has another Redis client runs it (`REDIS_CLIENT=node-redis` or
 * `glide`, see sample-app/redis/lock-client.ts): three replicas on one Redis, each locking through a
 * different client family (ioredis by URL, node-redis, Valkey GLIDE), sell exactly the stock of one
 * item between them, and the app closes the client it made at shutdown.
 */
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import {
  closeApps,
  startSampleAppUnderTest,
  type SampleAppUnderTest,
} from '../support/sample-app-under-test';
import { waitUntil } from '../support/wait';

jest.setTimeout(120_000);

let redis: RedisServerProcess;
let replicas: SampleAppUnderTest[] = [];

beforeAll(async () => {
  redis = await startRedis();
  replicas = await Promise.all(
    (['ioredis', 'node-redis', 'glide'] as const).map((redisClient) =>
      startSampleAppUnderTest(redis.url, { seckillDelayMs: 2, redisClient }),
    ),
  );
});

afterAll(async () => {
  await closeApps(replicas);
  await redis?.stop();
});

describe('seckill on three client families at once', () => {
  it('sells exactly the stock when the buyers are spread over an ioredis, a node-redis and a GLIDE replica', async () => {
    const [first, ...others] = replicas;
    await first!.http.put('/seckill/tablet').send({ stock: 15 }).expect(200);

    const answers = await Promise.all(
      Array.from({ length: 45 }, (_, i) => replicas[i % replicas.length]!.http.post('/seckill/tablet')),
    );

    const bought = answers.filter((r) => r.status === 200);
    expect(bought).toHaveLength(15);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(30);
    // Every unit sold once: the `sold` counters the buyers saw are 1..15, no repeats.
    expect(bought.map((r) => r.body.sold).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 1),
    );
    for (const replica of others) {
      await replica.http.get('/seckill/tablet').expect(200, { itemId: 'tablet', stock: 0, sold: 15 });
    }
  });

  it('closes the client the app made when the app closes, and leaves no lock behind', async () => {
    await closeApps(replicas);
    replicas = [];
    const { Redis } = await import('ioredis');
    const probe = new Redis(redis.url);
    try {
      // Every connection of the three replicas closes (the node-redis and GLIDE clients the app made
      // included): only the probe is left. The server notices a closed socket a moment later, hence the wait.
      await waitUntil(async () => ((await probe.client('LIST')) as string).trim().split('\n').length === 1, {
        description: 'only the probe connected',
      });
      expect(await probe.keys('*tablet*:m')).toEqual([]);
    } finally {
      probe.disconnect();
    }
  });
});
