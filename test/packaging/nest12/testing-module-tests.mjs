// The toolchain matrix's test-runner cell for the Nest 12 ESM app (scripts/test-toolchains.cjs), written
// once for Jest in ESM mode (jest/testing-module.test.mjs) and Vitest (vitest/testing-module.test.mjs):
// the testing module in a Nest TestingModule, imported through the package's `testing` entry.
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { DistributedLockService, LockNotAcquiredError } from 'nestjs-distributed-lock';
import { DistributedLockTestingModule } from 'nestjs-distributed-lock/testing';

/** Declares the test with the runner's `describe`/`it`/`expect`. */
export function describeTestingModule({ describe, expect, it }, title) {
  describe(title, () => {
    it('re-enters with the same fencing token and fences the next grant above it', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [DistributedLockTestingModule.forRoot()],
      }).compile();
      await moduleRef.init();
      try {
        const locks = moduleRef.get(DistributedLockService);
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
}
