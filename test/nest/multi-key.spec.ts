/*
 * Multi-key locks through a real Nest app: a decorated provider method whose key is an array of
 * templates, a key function returning several keys, a controller route that answers 423 when one
 * of its keys is busy, and a service that locks several keys by hand with using(keys).
 */
import { Controller, Injectable, Param, Post } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import type Redis from 'ioredis';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp } from '../support/nest-env';

const PREFIX = 'nmulti:';
let server: RedisServerProcess;
let probe: Redis;
let app: INestApplication;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

@Injectable()
class Accounts {
  constructor(readonly locks: DistributedLockService) {}

  /** A non-atomic transfer between two balances kept in Redis (read, yield, write). */
  @DistributedLock({ key: ['acct:{0}', 'acct:{1}'], waitMs: 30_000 })
  async transfer(from: string, to: string, amount: number): Promise<{ tokens: (number | undefined)[] }> {
    const [a, b] = await Promise.all([probe.get(`bal:${from}`), probe.get(`bal:${to}`)]);
    await tick();
    await probe.set(`bal:${from}`, String(Number(a ?? 0) - amount));
    await probe.set(`bal:${to}`, String(Number(b ?? 0) + amount));
    // Inside the critical section of every key: each is this call's lock.
    return {
      tokens: [
        this.locks.current(`acct:${from}`)?.fencingToken,
        this.locks.current(`acct:${to}`)?.fencingToken,
      ],
    };
  }

  // A key function may return several keys only where the decorator declares several: `key: [fn]`.
  @DistributedLock({ key: [(skus: string[]) => skus.map((s) => `sku:${s}`)], waitMs: 5_000 })
  async reserve(skus: string[]): Promise<string[]> {
    // A nested single-key call for one of the keys re-enters instead of waiting for itself.
    await this.locks.using(`sku:${skus[0]!}`, { waitMs: 0 }, async () => undefined);
    return skus.map((s) => this.locks.current(`sku:${s}`)?.key ?? 'missing');
  }

  /** By hand: several keys through the service. */
  audit(keys: string[]): Promise<number> {
    return this.locks.using(keys, { waitMs: 5_000 }, async (lock) => Object.keys(lock.fencingTokens).length);
  }
}

@Controller('accounts')
class AccountsController {
  @Post(':a/:b/close')
  @DistributedLock({ key: ['acct:{0}', 'acct:{1}'], waitMs: 50 })
  async close(@Param('a') a: string, @Param('b') b: string): Promise<{ closed: string[] }> {
    return { closed: [a, b] };
  }
}

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
  app = await startApp({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: PREFIX })],
    providers: [Accounts],
    controllers: [AccountsController],
  });
});

afterAll(async () => {
  await closeApps(app);
  if (probe) await closeClient(probe);
  await server?.stop();
});

describe('multi-key locks in a Nest app', () => {
  it('runs opposite transfers of a decorated method without deadlock or lost update', async () => {
    const accounts = app.get(Accounts);
    await probe.mset('bal:x', '1000', 'bal:y', '1000');
    const calls = Array.from({ length: 60 }, (_, i) =>
      i % 2 === 0 ? accounts.transfer('x', 'y', 3) : accounts.transfer('y', 'x', 1),
    );
    const results = await Promise.all(calls);
    expect(Number(await probe.get('bal:x')) + Number(await probe.get('bal:y'))).toBe(2000);
    expect(Number(await probe.get('bal:x'))).toBe(1000 - 30 * 3 + 30 * 1);
    for (const r of results) expect(r.tokens.every((t) => typeof t === 'number')).toBe(true);
    expect(await probe.keys(`${PREFIX}*:m`)).toEqual([]);
  });

  it('takes the keys a key function returns, and nested calls re-enter', async () => {
    await expect(app.get(Accounts).reserve(['s2', 's1'])).resolves.toEqual(['sku:s2', 'sku:s1']);
  });

  it('locks several keys by hand with service.using(keys)', async () => {
    await expect(app.get(Accounts).audit(['k1', 'k2', 'k1'])).resolves.toBe(2);
  });

  it('answers 423 on a route when one of its keys stays busy, and 201 once it is free', async () => {
    const service = app.get(DistributedLockService);
    const held = await service.acquire('acct:q');
    const busy = await request(app.getHttpServer()).post('/accounts/p/q/close');
    expect(busy.status).toBe(423);
    expect(await held.release()).toBe(true);
    const ok = await request(app.getHttpServer()).post('/accounts/q/p/close');
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ closed: ['q', 'p'] });
  });

  it('refuses a multi-key template with a kind that cannot take several keys, at decoration time', () => {
    expect(() => {
      class Bad {
        @DistributedLock({ key: ['a:{0}', 'b:{0}'], mode: 'write' })
        async run(_id: string): Promise<void> {}
      }
      return Bad;
    }).toThrow(/"mode" option cannot be used with several keys/);
    expect(() => {
      class Empty {
        @DistributedLock({ key: [] })
        async run(): Promise<void> {}
      }
      return Empty;
    }).toThrow(RangeError);
  });
});
