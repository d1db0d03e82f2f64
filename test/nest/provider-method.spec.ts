import { Injectable } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import type Redis from 'ioredis';
import { DistributedLock, DistributedLockModule, DistributedLockService, LockHandle } from '../../lib';
import { keySlot } from '../support/cluster-slots';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import { Barrier, track } from '../support/barrier';
import { closeApps, startApp } from '../support/nest-env';
import { scriptCalls } from '../support/redis-probe';

const PREFIX = 'provider:';
let server: RedisServerProcess;
let probe: Redis;
let app: INestApplication;

interface Seen {
  key?: string;
  token?: number;
  aborted?: boolean;
}
const seen = (lock: LockHandle | undefined): Seen => ({
  key: lock?.key,
  token: lock?.fencingToken,
  aborted: lock?.signal.aborted,
});

@Injectable()
class InventoryService {
  barrier?: Barrier;
  entered: string[] = [];

  constructor(readonly locks: DistributedLockService) {}

  @DistributedLock({ key: 'stock:{0}', waitMs: 30_000 })
  async reserve(sku: string): Promise<{ outer: Seen; inner: Seen; holds: number }> {
    this.entered.push(`reserve:${sku}`);
    await this.barrier?.wait();
    const outer = seen(this.locks.current());
    const { lock, holds } = await this.adjust(sku);
    return { outer, inner: lock, holds };
  }

  // Same key, called from inside reserve(): must re-enter, not wait for itself.
  @DistributedLock({ key: 'stock:{0}', waitMs: 2_000 })
  async adjust(sku: string): Promise<{ lock: Seen; holds: number }> {
    const holds = await probe.hlen(`${PREFIX}{stock:${sku}}:m`);
    return { lock: seen(this.locks.current(`stock:${sku}`)), holds };
  }

  @DistributedLock({ key: 'order:{1.id}/{1.lines.0.sku}' })
  async place(_user: string, _order: { id: number; lines: { sku: string }[] }): Promise<Seen> {
    return seen(this.locks.current());
  }

  @DistributedLock({ key: (user: { id: number }, day: string) => `report:${user.id}:${day}` })
  async report(_user: { id: number }, _day: string): Promise<Seen> {
    return seen(this.locks.current());
  }

  @DistributedLock({ key: ((n: number) => n * 10) as unknown as (n: number) => string })
  async badKeyFunction(_n: number): Promise<void> {}

  @DistributedLock({ key: 'cart:{0}' })
  async redisKeysOfCart(_cart: string): Promise<string[]> {
    return probe.keys(`${PREFIX}*`);
  }

  // @ts-expect-error a sync method is refused by the compiler; at run time its result becomes a promise
  @DistributedLock({ key: 'double:{0}' })
  double(n: number): number {
    return n * 2;
  }

  @DistributedLock({ key: 'job:{0}', onBusy: 'skip' })
  async runOnce(job: string): Promise<string> {
    this.entered.push(`runOnce:${job}`);
    await this.barrier?.wait();
    return `done:${job}`;
  }
}

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: PREFIX })],
    providers: [InventoryService],
  });
});

afterAll(async () => {
  await closeApps(app);
  if (probe) await closeClient(probe);
  await server?.stop();
});

const inventory = () => app.get(InventoryService);

describe('@DistributedLock() on a provider method', () => {
  it('re-enters when a decorated call inside the critical section asks for the same key', async () => {
    const { outer, inner, holds } = await inventory().reserve('apple');
    expect(outer).toEqual({ key: 'stock:apple', token: expect.any(Number), aborted: false });
    expect(inner.token).toBe(outer.token);
    expect(holds).toBe(5); // owner, fence, the hold count n and one field per hold (outer and inner)
    expect(await probe.exists(`${PREFIX}{stock:apple}:m`)).toBe(0);
  });

  it('makes a sibling call started outside the critical section wait its turn', async () => {
    const service = inventory();
    service.barrier = new Barrier();
    try {
      const first = service.reserve('pear');
      await waitUntil(() => service.barrier!.entered === 1, { description: 'first call inside' });
      const second = track(service.reserve('pear'));
      await waitUntil(() => app.get(DistributedLockService).stats().waitingLocks === 1, {
        description: 'second call waiting',
      });
      expect(service.barrier.entered).toBe(1);
      expect(second.settled()).toBe(false);
      service.barrier.open();
      const [a, b] = await Promise.all([first, second.promise]);
      expect(b.outer.token).toBeGreaterThan(a.outer.token!);
    } finally {
      service.barrier.open();
      service.barrier = undefined;
    }
  });

  it('returns no lock from current() outside decorated calls', () => {
    expect(app.get(DistributedLockService).current()).toBeUndefined();
  });

  it('builds keys from a property path and from a key function', async () => {
    await expect(inventory().place('ann', { id: 7, lines: [{ sku: 'x1' }] })).resolves.toMatchObject({
      key: 'order:7/x1',
    });
    await expect(inventory().report({ id: 3 }, '2026-01-02')).resolves.toMatchObject({
      key: 'report:3:2026-01-02',
    });
  });

  it('returns a promise even for a synchronous method', async () => {
    const result = inventory().double(21);
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(42);
  });

  it('skips the method and resolves undefined when onBusy is skip and the lock is busy', async () => {
    const service = inventory();
    service.barrier = new Barrier();
    service.entered = [];
    try {
      const first = service.runOnce('nightly');
      await waitUntil(() => service.barrier!.entered === 1, { description: 'first run inside' });
      await expect(service.runOnce('nightly')).resolves.toBeUndefined();
      expect(service.entered).toEqual(['runOnce:nightly']);
      service.barrier.open();
      await expect(first).resolves.toBe('done:nightly');
    } finally {
      service.barrier.open();
      service.barrier = undefined;
    }
  });
});

describe('key templates with bad arguments', () => {
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    [
      'a missing argument',
      () => (inventory().reserve as (...a: unknown[]) => Promise<unknown>)(),
      /stock:\{0\}.*argument 0.*missing/,
    ],
    [
      'an object argument',
      () => inventory().reserve({ sku: 1 } as unknown as string),
      /stock:\{0\}.*\{0\} is an object/,
    ],
    [
      'a missing property',
      () => inventory().place('ann', { id: 1, lines: [] }),
      /order:\{1\.id\}\/\{1\.lines\.0\.sku\}.*cannot read "sku"/,
    ],
    ['a boolean', () => inventory().reserve(true as unknown as string), /\{0\} is boolean true/],
    ['NaN', () => inventory().reserve(NaN as unknown as string), /\{0\} is NaN/],
    [
      'a key function returning a number',
      () => inventory().badKeyFunction(5),
      /key function.*InventoryService\.badKeyFunction.*number 50/,
    ],
  ];

  it.each(cases)('rejects %s with a TypeError before any Redis command', async (_name, call, message) => {
    const before = await scriptCalls(server.port);
    const promise = call();
    expect(promise).toBeInstanceOf(Promise);
    await expect(promise).rejects.toThrow(TypeError);
    await expect(promise).rejects.toThrow(message);
    expect(await scriptCalls(server.port)).toBe(before);
  });
});

describe('user text with braces in keys', () => {
  it('keeps every Redis key of the lock in one Cluster hash slot', async () => {
    const keys = await inventory().redisKeysOfCart('}{evil}{');
    const ours = keys.filter((k) => k.includes('cart:'));
    expect(ours).toEqual(
      expect.arrayContaining([
        `${PREFIX}{cart:%7D%7Bevil%7D%7B}:m`,
        `${PREFIX}{cart:%7D%7Bevil%7D%7B}:fence`,
      ]),
    );
    const slots = new Set([...ours, `${PREFIX}{cart:%7D%7Bevil%7D%7B}:m:ch`].map(keySlot));
    expect(slots.size).toBe(1);
    expect(await probe.exists(`${PREFIX}{cart:%7D%7Bevil%7D%7B}:m`)).toBe(0);
  });
});
