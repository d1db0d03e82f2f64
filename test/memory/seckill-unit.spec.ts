import { Global, Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockTestingControls, DistributedLockTestingModule } from '../../lib/testing';
import { AppRedis } from '../../sample-app/redis/app-redis';
import { DEFAULT_SAMPLE_CONFIG, SAMPLE_CONFIG } from '../../sample-app/sample-config';
import { SeckillModule } from '../../sample-app/seckill/seckill.module';

// The sample app's seckill feature in a unit test (the README shows this file): the real
// controller, service and @DistributedLock, the in-memory lock engine, and a Map for the stock.
// No Redis at all.

/** Stands in for the app's Redis client: the few commands SeckillService uses, on a Map. */
class MapRedis {
  readonly data = new Map<string, string>();
  readonly client = {
    get: async (k: string) => this.data.get(k) ?? null,
    set: async (k: string, v: string) => void this.data.set(k, v),
    mget: async (...ks: string[]) => ks.map((k) => this.data.get(k) ?? null),
    mset: async (...kv: string[]) => {
      for (let i = 0; i < kv.length; i += 2) this.data.set(kv[i]!, kv[i + 1]!);
    },
    incr: async (k: string) => {
      const n = Number(this.data.get(k) ?? 0) + 1;
      this.data.set(k, String(n));
      return n;
    },
  };
  key(name: string): string {
    return name;
  }
}

@Global()
@Module({
  providers: [
    { provide: SAMPLE_CONFIG, useValue: { ...DEFAULT_SAMPLE_CONFIG, seckillDelayMs: 1 } },
    { provide: AppRedis, useClass: MapRedis },
  ],
  exports: [SAMPLE_CONFIG, AppRedis],
})
class FakeCoreModule {}

let app: INestApplication;
let locks: DistributedLockTestingControls;

beforeEach(async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [
      FakeCoreModule,
      DistributedLockTestingModule.forRoot({ isGlobal: true, defaults: { waitMs: 1_000 } }),
      SeckillModule,
    ],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  locks = app.get(DistributedLockTestingControls);
});

afterEach(() => app.close());

it('never oversells: 20 concurrent buyers, 5 in stock, exactly 5 sales', async () => {
  const http = request(app.getHttpServer());
  await http.put('/seckill/phone').send({ stock: 5 }).expect(200);
  const answers = await Promise.all(Array.from({ length: 20 }, () => http.post('/seckill/phone')));
  expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
  expect(answers.filter((r) => r.status === 409)).toHaveLength(15);
  expect((await http.get('/seckill/phone')).body).toMatchObject({ stock: 0, sold: 5 });
});

it('answers 423 with Retry-After while another replica holds the item', async () => {
  const http = request(app.getHttpServer());
  await http.put('/seckill/tv').send({ stock: 1 }).expect(200);
  await locks.holdElsewhere('seckill:tv', { forMs: 60_000 });
  const busy = await http
    .post('/seckill/tv')
    .query({})
    .expect((r) => expect(r.status).toBe(423));
  expect(busy.headers['retry-after']).toBeDefined();
});

it('answers 503 when the lock backend is down', async () => {
  locks.failBackend();
  await request(app.getHttpServer()).post('/seckill/radio').expect(503);
});
