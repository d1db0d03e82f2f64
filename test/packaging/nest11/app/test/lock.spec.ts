// The test-runner cells (scripts/test-toolchains.cjs): the testing module in a Nest TestingModule,
// under Jest 29 (ts-jest, @swc/jest), Jest 30 and Vitest (unplugin-swc, `globals: true`), on Nest 10
// and 11, on Node 20, 22 and 24. OrderService takes the lock service by constructor injection, so a
// transform that drops decorator metadata fails here (Nest cannot resolve its parameter).
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLockService, LockNotAcquiredError } from 'nestjs-distributed-lock';
import { DistributedLockTestingModule } from 'nestjs-distributed-lock/testing';

@Injectable()
class OrderService {
  constructor(readonly locks: DistributedLockService) {}
}

describe('nestjs-distributed-lock/testing in a Nest TestingModule', () => {
  it('re-enters with the same fencing token and fences the next grant above it', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockTestingModule.forRoot()],
      providers: [OrderService],
    }).compile();
    await moduleRef.init();
    try {
      const { locks } = moduleRef.get(OrderService);
      expect(locks).toBe(moduleRef.get(DistributedLockService));
      const first = await locks.using('order:1', {}, async (outer) => {
        const inner = await locks.acquire('order:1', { waitMs: 0 });
        try {
          expect(inner.fencingToken).toBe(outer.fencingToken);
          expect(locks.current('order:1')?.key).toBe('order:1');
        } finally {
          await inner.release();
        }
        return outer.fencingToken;
      });
      expect(first).toBeGreaterThan(0);
      const held = await locks.acquire('order:1', { reentrant: false });
      try {
        await expect(locks.acquire('order:1', { waitMs: 0, reentrant: false })).rejects.toBeInstanceOf(
          LockNotAcquiredError,
        );
        expect(held.fencingToken).toBeGreaterThan(first);
      } finally {
        await held.release();
      }
    } finally {
      await moduleRef.close();
    }
  });
});
