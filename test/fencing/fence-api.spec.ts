/*
 * The fencing entry's own behaviour: the SQL text per dialect (PostgreSQL is run in
 * fence-adapters.spec.ts; MySQL's text is checked here only), the migration, bad input refused before
 * any I/O, the owner id per grant (re-entry shares it, the next grant gets another), currentFence()
 * inside using() and a decorated Nest method, and the X-Fencing-Token guard in a real Nest app.
 */
import { Controller, Injectable, Module, Put, Req, UseGuards, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import {
  currentFence,
  fenceColumnsMigration,
  fencedUpdateSql,
  fenceOf,
  fencingHeaders,
  fenceTokenBigInt,
  MemoryFenceLedger,
  readFencingHeaders,
} from '../../lib/fencing';
import { ADMITTED_FENCE, FencedResource, FenceLedger, FencingTokenGuard } from '../../lib/fencing/nest';
import { useLockEnv } from '../support/lock-env';

const fence = { key: 'sku:1', token: 1_800_000_000_000_001, owner: 'o1' };

describe('fencedUpdateSql', () => {
  it('writes the guarded UPDATE with $n placeholders for PostgreSQL, reusing token and owner', () => {
    const s = fencedUpdateSql({
      dialect: 'postgres',
      table: 'app.stock',
      set: { qty: 4 },
      where: { sku: 'a' },
      fence,
    });
    expect(s.text).toBe(
      'UPDATE "app"."stock" SET "qty" = $1, "lock_fence" = $2, "lock_owner" = $3 WHERE "sku" = $4 AND ' +
        '("lock_fence" < $2 OR ("lock_fence" = $2 AND "lock_owner" = $3))',
    );
    expect(s.values).toEqual([4, '1800000000000001', 'o1', 'a']);
    expect(s.readFence).toEqual({
      text: 'SELECT "lock_fence" AS fence, "lock_owner" AS owner FROM "app"."stock" WHERE "sku" = $1',
      values: ['a'],
    });
  });

  it('writes ? placeholders in order for MySQL (backquotes) and SQLite (numbers bound as numbers)', () => {
    const mysql = fencedUpdateSql({
      dialect: 'mysql',
      table: 'stock',
      set: { qty: 4 },
      where: { sku: 'a' },
      fence,
    });
    expect(mysql.text).toBe(
      'UPDATE `stock` SET `qty` = ?, `lock_fence` = ?, `lock_owner` = ? WHERE `sku` = ? AND ' +
        '(`lock_fence` < ? OR (`lock_fence` = ? AND `lock_owner` = ?))',
    );
    expect(mysql.values).toEqual([
      4,
      '1800000000000001',
      'o1',
      'a',
      '1800000000000001',
      '1800000000000001',
      'o1',
    ]);
    const sqlite = fencedUpdateSql({
      dialect: 'sqlite',
      table: 'stock',
      set: { qty: 4 },
      where: { sku: 'a' },
      fence,
      columns: { fence: 'f', owner: 'w' },
    });
    expect(sqlite.text).toBe(
      'UPDATE "stock" SET "qty" = ?, "f" = ?, "w" = ? WHERE "sku" = ? AND ("f" < ? OR ("f" = ? AND "w" = ?))',
    );
    expect(sqlite.values[1]).toBe(1_800_000_000_000_001);
  });

  it('refuses bad input with a clear error before writing any SQL', () => {
    const base = { dialect: 'postgres' as const, table: 't', set: { a: 1 }, where: { id: 1 }, fence };
    expect(() => fencedUpdateSql({ ...base, dialect: 'oracle' as never })).toThrow(/dialect must be one of/);
    expect(() => fencedUpdateSql({ ...base, where: {} })).toThrow(/where must name the row/);
    expect(() => fencedUpdateSql({ ...base, table: 'a"b' })).toThrow(TypeError);
    expect(() => fencedUpdateSql({ ...base, set: { lock_fence: 1 } })).toThrow(
      /fence columns are written by the helper/,
    );
    expect(() => fencedUpdateSql({ ...base, fence: { ...fence, token: 0 } })).toThrow(RangeError);
    expect(() => fencedUpdateSql({ ...base, fence: { ...fence, token: 1.5 } })).toThrow(RangeError);
    expect(() => fencedUpdateSql({ ...base, fence: { ...fence, token: 2 ** 53 } })).toThrow(RangeError);
    expect(() => fencedUpdateSql({ ...base, fence: { ...fence, owner: '' } })).toThrow(TypeError);
    const aborted = AbortSignal.abort(new Error('lost'));
    expect(() => fencedUpdateSql({ ...base, fence: { ...fence, signal: aborted } })).toThrow('lost');
  });

  it('accepts bigint tokens beyond 2^53 as exact decimal text', () => {
    const big = 2n ** 60n + 1n;
    const s = fencedUpdateSql({
      dialect: 'postgres',
      table: 't',
      set: {},
      where: { id: 1 },
      fence: { ...fence, token: big },
    });
    expect(s.values[0]).toBe('1152921504606846977');
  });
});

describe('fenceColumnsMigration', () => {
  it('adds a 64-bit fence and the owner, NOT NULL with defaults', () => {
    expect(fenceColumnsMigration('postgres', 'stock')).toBe(
      'ALTER TABLE "stock" ADD COLUMN "lock_fence" BIGINT NOT NULL DEFAULT 0;\n' +
        'ALTER TABLE "stock" ADD COLUMN "lock_owner" TEXT NOT NULL DEFAULT \'\';\n',
    );
    expect(fenceColumnsMigration('mysql', 'stock')).toContain('`lock_owner` VARCHAR(200) NOT NULL');
    expect(fenceColumnsMigration('sqlite', 'stock')).toContain('"lock_fence" INTEGER NOT NULL DEFAULT 0');
  });
});

describe('fencing headers', () => {
  it('round-trip token and owner, and refuse malformed ones', () => {
    const headers = fencingHeaders(fence);
    expect(headers).toEqual({ 'x-fencing-token': '1800000000000001', 'x-fencing-owner': 'o1' });
    expect(readFencingHeaders(headers, 'r')).toEqual({ key: 'r', token: 1_800_000_000_000_001, owner: 'o1' });
    expect(readFencingHeaders({}, 'r')).toBeUndefined();
    expect(() => readFencingHeaders({ 'x-fencing-token': '12abc', 'x-fencing-owner': 'o' }, 'r')).toThrow(
      TypeError,
    );
    expect(() => readFencingHeaders({ 'x-fencing-token': '12' }, 'r')).toThrow(/x-fencing-owner/);
  });
});

describe('fences of real locks', () => {
  const env = useLockEnv({ keyPrefix: 'fence-api:' });

  it('gives re-entrant holds of one grant the same owner and the next grant another', async () => {
    const engine = env.engine();
    const [outer, inner, second] = await engine
      .using('sku:1', {}, async (lock) => {
        const outerFence = fenceOf(lock);
        const innerFence = await engine.using('sku:1', {}, async (again) => fenceOf(again));
        return [outerFence, innerFence, undefined];
      })
      .then(async ([o, i]) => [o!, i!, await engine.using('sku:1', {}, async (lock) => fenceOf(lock))]);
    expect(inner).toMatchObject({ token: outer.token, owner: outer.owner });
    expect(second.owner).not.toBe(outer.owner);
    expect(Number(second.token)).toBeGreaterThan(Number(outer.token));
    expect(fenceTokenBigInt(second)).toBe(BigInt(second.token));
  });

  it('currentFence() reads the lock of the async context and refuses outside one', async () => {
    const engine = env.engine();
    expect(() => currentFence(engine, 'sku:2')).toThrow(/holds no lock on "sku:2"/);
    const seen = await engine.using('sku:2', {}, async (lock) => [
      currentFence(engine).token,
      lock.fencingToken,
    ]);
    expect(seen[0]).toBe(seen[1]);
  });

  it('currentFence(service) works in a decorated provider method (a repository needs no token argument)', async () => {
    @Injectable()
    class StockRepository {
      constructor(private readonly locks: DistributedLockService) {}
      /** What a repository does: takes the fence from the context of the caller's lock. */
      fence() {
        return currentFence(this.locks);
      }
    }
    @Injectable()
    class StockService {
      constructor(readonly repository: StockRepository) {}
      @DistributedLock({ key: 'stock:{0}' })
      async reserve(_sku: string) {
        return this.repository.fence();
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ redis: env.url, keyPrefix: 'fence-api-nest:' })],
      providers: [StockRepository, StockService],
    }).compile();
    const app = await moduleRef.init();
    try {
      const fenceSeen = await app.get(StockService).reserve('a');
      expect(fenceSeen.key).toBe('stock:a');
      expect(fenceSeen.token).toBeGreaterThan(0);
      expect(() => app.get(StockRepository).fence()).toThrow(/holds no lock/);
    } finally {
      await app.close();
    }
  });
});

describe('FencingTokenGuard in a Nest app', () => {
  const ledger = new MemoryFenceLedger();
  let app: INestApplication;

  @Controller('stock')
  @UseGuards(FencingTokenGuard)
  class StockController {
    @Put(':sku')
    @FencedResource((req) => `stock:${req.params.sku}`)
    put(@Req() req: Record<symbol, unknown>) {
      return { admitted: String((req[ADMITTED_FENCE] as { token: number }).token) };
    }

    /** A resource that also takes unfenced writes (required: false). */
    @Put(':sku/note')
    @FencedResource((req) => `note:${req.params.sku}`, { required: false })
    note(@Req() req: Record<symbol, unknown>) {
      const fence = req[ADMITTED_FENCE] as { token: number } | undefined;
      return { admitted: fence ? String(fence.token) : 'none' };
    }
  }
  @Module({ controllers: [StockController], providers: [{ provide: FenceLedger, useValue: ledger }] })
  class AppModule {}

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(() => app?.close());

  it('with required: false, lets a write without a token through and still refuses a stale one', async () => {
    const put = (headers: Record<string, string>) =>
      request(app.getHttpServer()).put('/stock/n/note').set(headers);
    await put({}).expect(200, { admitted: 'none' });
    await put({ 'x-fencing-token': '5', 'x-fencing-owner': 'a' }).expect(200, { admitted: '5' });
    await put({ 'x-fencing-token': '4', 'x-fencing-owner': 'b' }).expect(409);
    await put({ 'x-fencing-token': 'five', 'x-fencing-owner': 'a' }).expect(400);
    expect(ledger.storedFence('note:n')).toEqual({ token: 5, owner: 'a' });
  });

  it('admits increasing tokens, answers 409 to a stale one, 400 to a malformed one, 428 to none', async () => {
    const put = (headers: Record<string, string>) =>
      request(app.getHttpServer()).put('/stock/a').set(headers);
    await put({ 'x-fencing-token': '10', 'x-fencing-owner': 'a' }).expect(200, { admitted: '10' });
    await put({ 'x-fencing-token': '10', 'x-fencing-owner': 'a' }).expect(200);
    await put({ 'x-fencing-token': '12', 'x-fencing-owner': 'b' }).expect(200);
    const stale = await put({ 'x-fencing-token': '10', 'x-fencing-owner': 'a' }).expect(409);
    expect(stale.body).toMatchObject({ code: 'STALE_FENCE', storedFence: '12' });
    await put({ 'x-fencing-token': 'ten', 'x-fencing-owner': 'a' }).expect(400);
    await put({}).expect(428);
    expect(ledger.storedFence('stock:a')).toEqual({ token: 12, owner: 'b' });
    // Another resource has its own fence.
    await request(app.getHttpServer())
      .put('/stock/b')
      .set({ 'x-fencing-token': '1', 'x-fencing-owner': 'c' })
      .expect(200);
  });
});
