/*
 * A unit test of an existing AppModule with a fake lock service: overrideProvider(DistributedLockService)
 * .useValue(fake), where the fake implements only the service's public API (acquire, tryAcquire,
 * using, current). Decorated provider methods, Observable handlers and HTTP routes all run through
 * the fake's using(); a busy fake gives the route its 423 and a skipping job its skip. Nothing
 * reaches the module's Redis.
 */
import { Controller, Injectable, Module, Param, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Observable, of } from 'rxjs';
import request from 'supertest';
import {
  DistributedLock,
  DistributedLockModule,
  DistributedLockService,
  LockNotAcquiredError,
  type LockHandle,
  type LockOptions,
} from '../../lib';
import { redisInfo } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, uniquePrefix } from '../support/nest-env';

/** A stand-in written against the public API only, recording what it was asked for. */
class FakeLocks {
  readonly calls: { key: string; options: LockOptions | undefined }[] = [];
  busy = new Set<string>();

  private handle(key: string): LockHandle {
    return {
      key,
      fencingToken: 1,
      signal: new AbortController().signal,
      release: async () => true,
      extend: async () => undefined,
    } as unknown as LockHandle;
  }

  async acquire(key: string, options?: LockOptions): Promise<LockHandle> {
    this.calls.push({ key, options });
    if (this.busy.has(key)) throw new LockNotAcquiredError(key, options?.waitMs ?? 0, 1_500);
    return this.handle(key);
  }

  async tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null> {
    return this.acquire(key, options).catch(() => null);
  }

  async using<T>(
    key: string,
    options: LockOptions | undefined,
    fn: (lock: LockHandle) => Promise<T> | T,
  ): Promise<T> {
    return fn(await this.acquire(key, options));
  }

  current(): LockHandle | undefined {
    return undefined;
  }
}

@Injectable()
class OrderService {
  readonly ran: string[] = [];

  @DistributedLock({ key: 'order:{0}', waitMs: 250 })
  async place(id: string): Promise<string> {
    this.ran.push(`place:${id}`);
    return `placed ${id}`;
  }

  @DistributedLock({ key: 'order-stream:{0}' })
  stream(id: string): Observable<string> {
    this.ran.push(`stream:${id}`);
    return of(`a:${id}`, `b:${id}`);
  }

  @DistributedLock({ key: 'nightly', onBusy: 'skip' })
  async nightly(): Promise<string> {
    this.ran.push('nightly');
    return 'ran';
  }
}

@Controller('orders')
class OrderController {
  constructor(private readonly orders: OrderService) {}

  @Post(':id')
  @DistributedLock({ key: 'route:{0}' })
  async create(@Param('id') id: string): Promise<string> {
    return this.orders.place(id);
  }
}

let server: RedisServerProcess;

/** Commands the server has executed, INFO itself left out. */
async function commandsServed(): Promise<number> {
  const stats = await redisInfo(server.port, 'commandstats');
  return Object.entries(stats)
    .filter(([field]) => field.startsWith('cmdstat_') && field !== 'cmdstat_info')
    .reduce((sum, [, value]) => sum + Number(/calls=(\d+)/.exec(value)?.[1] ?? 0), 0);
}

/** The app under test, as it is in production: its own DistributedLockModule.forRoot(). */
@Module({})
class AppModule {}

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe('overrideProvider(DistributedLockService).useValue(a fake of the public API)', () => {
  it('runs decorated methods, Observable handlers and routes through the fake', async () => {
    const fake = new FakeLocks();
    const moduleRef = await Test.createTestingModule({
      imports: [
        {
          module: AppModule,
          imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('fake') })],
          controllers: [OrderController],
          providers: [OrderService],
        },
      ],
    })
      .overrideProvider(DistributedLockService)
      .useValue(fake)
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const before = await commandsServed();
    try {
      const orders = app.get(OrderService);
      await expect(orders.place('1')).resolves.toBe('placed 1');
      const streamed: string[] = [];
      await new Promise<void>((resolve, reject) =>
        orders.stream('2').subscribe({ next: (v) => streamed.push(v), error: reject, complete: resolve }),
      );
      expect(streamed).toEqual(['a:2', 'b:2']);

      const http = request(app.getHttpServer());
      await http.post('/orders/3').expect(201);
      fake.busy.add('route:4');
      const busy = await http.post('/orders/4').expect(423);
      expect(busy.headers['retry-after']).toBe('2');

      fake.busy.add('nightly');
      await expect(orders.nightly()).resolves.toBeUndefined(); // skipped: busy elsewhere
      fake.busy.delete('nightly');
      await expect(orders.nightly()).resolves.toBe('ran');

      expect(fake.calls.map((c) => c.key)).toEqual([
        'order:1',
        'order-stream:2',
        'route:3',
        'order:3',
        'route:4',
        'nightly',
        'nightly',
      ]);
      expect(fake.calls[0]!.options).toMatchObject({ waitMs: 250 });
      expect(fake.calls[5]!.options).toMatchObject({ waitMs: 0 }); // onBusy: 'skip' makes one attempt
      expect(orders.ran).toEqual(['place:1', 'stream:2', 'place:3', 'nightly']);
    } finally {
      await closeApps(app);
    }
    // The fake stood in for the service: no lock command reached the module's Redis.
    expect(await commandsServed()).toBe(before);
  });
});
