import { Controller, Get, Injectable, Param, Post, UseInterceptors } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  DistributedLock,
  DistributedLockInterceptor,
  DistributedLockService,
  LockLostError,
} from '../../lib';
import { DistributedLockTestingControls, DistributedLockTestingModule } from '../../lib/testing';
import { whenAborted } from '../support/lock-env';
import { Barrier } from '../support/barrier';

// A Nest unit test with DistributedLockTestingModule: the real service, decorator and HTTP mapping
// on the in-memory engine. No redis-server is started anywhere in this file.

@Injectable()
class StockService {
  /** Set by a test to hold a call inside its critical section. */
  barrier?: Barrier;
  sold = 0;

  constructor(private readonly locks: DistributedLockService) {}

  @DistributedLock({ key: 'stock:{0}', waitMs: 0 })
  async buy(sku: string): Promise<{ token: number; innerToken: number; sold: number }> {
    const token = this.locks.current()!.fencingToken;
    const innerToken = await this.audit(sku); // same key: must re-enter, not wait for itself
    await this.barrier?.wait();
    this.sold++;
    return { token, innerToken, sold: this.sold };
  }

  @DistributedLock({ key: 'stock:{0}', waitMs: 0 })
  async audit(_sku: string): Promise<number> {
    return this.locks.current()!.fencingToken;
  }

  /** Long work that stops as soon as its lock is lost. */
  @DistributedLock({ key: 'rebuild:{0}' })
  async rebuild(_id: string): Promise<unknown> {
    const lock = this.locks.current()!;
    await this.barrier?.wait();
    return whenAborted(lock.signal);
  }

  @DistributedLock({ key: 'nightly', onBusy: 'skip' })
  async nightly(): Promise<string> {
    return 'ran';
  }
}

// The lock is taken by the service; the interceptor maps its errors on this route (busy → 423,
// backend down → 503), as with DistributedLockModule. Decorated routes get it from @DistributedLock.
@Controller('stock')
@UseInterceptors(DistributedLockInterceptor)
class StockController {
  constructor(private readonly stock: StockService) {}

  @Post(':sku')
  buy(@Param('sku') sku: string) {
    return this.stock.buy(sku);
  }

  @Get(':sku/locked')
  @DistributedLock({ key: 'stock:{0}', waitMs: 0 })
  async locked(@Param('sku') sku: string) {
    return { sku };
  }
}

let app: INestApplication;
let service: StockService;
let controls: DistributedLockTestingControls;

beforeEach(async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockTestingModule.forRoot()],
    controllers: [StockController],
    providers: [StockService],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  service = app.get(StockService);
  controls = app.get(DistributedLockTestingControls);
});

afterEach(async () => {
  await app.close();
});

describe('DistributedLockTestingModule', () => {
  it('runs a decorated method that re-enters its own lock from a nested call', async () => {
    const result = await service.buy('apple');
    expect(result.innerToken).toBe(result.token);
    expect(result.token).toBeGreaterThan(0);
    expect(controls.isLocked('stock:apple')).toBe(false);
  });

  it('excludes a concurrent call for the same key (busy → LockNotAcquiredError)', async () => {
    service.barrier = new Barrier();
    const first = service.buy('pear');
    while (service.barrier.entered === 0) await new Promise((r) => setImmediate(r));
    await expect(service.buy('pear')).rejects.toThrow(/not acquired/);
    service.barrier.open();
    expect((await first).sold).toBe(1);
  });

  it('answers 200 through the route, then 423 with Retry-After while another replica holds the key', async () => {
    await request(app.getHttpServer()).post('/stock/plum').expect(201);
    await controls.holdElsewhere('stock:plum', { forMs: 20_000 });
    const busy = await request(app.getHttpServer()).post('/stock/plum').expect(423);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(1);
    await request(app.getHttpServer()).get('/stock/plum/locked').expect(423);
    await controls.releaseElsewhere('stock:plum');
    await request(app.getHttpServer()).post('/stock/plum').expect(201);
  });

  it('aborts the running method’s signal when its lock is lost', async () => {
    service.barrier = new Barrier();
    const running = service.rebuild('index');
    while (service.barrier.entered === 0) await new Promise((r) => setImmediate(r));
    expect(controls.loseLock('rebuild:index')).toBe(1);
    service.barrier.open();
    const reason = await running;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('deleted');
  });

  it('answers 503 while the backend fails, and 201 again after recovery', async () => {
    controls.failBackend();
    const res = await request(app.getHttpServer()).post('/stock/fig').expect(503);
    expect(res.body.message).toMatch(/unavailable/);
    controls.recoverBackend();
    await request(app.getHttpServer()).post('/stock/fig').expect(201);
  });

  it("skips an onBusy: 'skip' job while another replica runs it", async () => {
    await controls.holdElsewhere('nightly');
    await expect(service.nightly()).resolves.toBeUndefined();
    await controls.releaseElsewhere('nightly');
    await expect(service.nightly()).resolves.toBe('ran');
  });

  it('provides the same DistributedLockService, healthy and with its events', async () => {
    const locks = app.get(DistributedLockService);
    const seen: string[] = [];
    locks.events.on('acquired', (e) => seen.push(e.key));
    await service.buy('kiwi');
    expect(seen).toEqual(['stock:kiwi', 'stock:kiwi']);
    expect(await locks.health()).toMatchObject({ status: 'up', held: 0 });
  });
});

describe('DistributedLockTestingModule options', () => {
  it('applies busyStatus and engine defaults like DistributedLockModule', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockTestingModule.forRoot({ busyStatus: 409, retryAfter: 7, keyPrefix: 't:' })],
      controllers: [StockController],
      providers: [StockService],
    }).compile();
    const other = moduleRef.createNestApplication({ logger: false });
    await other.init();
    try {
      await other.get(DistributedLockTestingControls).holdElsewhere('stock:a');
      const res = await request(other.getHttpServer()).get('/stock/a/locked').expect(409);
      expect(res.headers['retry-after']).toBe('7');
    } finally {
      await other.close();
    }
  });

  it('takes the Nest options of DistributedLockModule: httpErrors: false leaves 423 to the app’s own interceptor', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockTestingModule.forRoot({ httpErrors: false, transportErrors: false })],
      controllers: [StockController], // registers DistributedLockInterceptor itself
      providers: [StockService],
    }).compile();
    const other = moduleRef.createNestApplication({ logger: false });
    await other.init();
    try {
      await other.get(DistributedLockTestingControls).holdElsewhere('stock:b');
      await request(other.getHttpServer()).get('/stock/b/locked').expect(423);
    } finally {
      await other.close();
    }
  });

  it('refuses bad options at start-up', () => {
    expect(() => DistributedLockTestingModule.forRoot({ renewEveryMs: -1 })).not.toThrow();
    return expect(
      Test.createTestingModule({
        imports: [DistributedLockTestingModule.forRoot({ renewEveryMs: -1 })],
      }).compile(),
    ).rejects.toThrow(RangeError);
  });
});
