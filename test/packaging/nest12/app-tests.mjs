// The tests of the Nest 12 app, written once for both runners: jest/nest12-app.test.mjs (Jest in ESM
// mode) and vitest/nest12-app.test.mjs pass their own describe/it/expect/hooks and a label.
import { createRequire } from 'node:module';
import { DistributedLockModule, LockNotAcquiredError } from 'nestjs-distributed-lock';
import { startRedisServer } from './redis-process.mjs';
import { closeWhileHolding, exitsByItself, routeWhileHeld, startApp, usingAndCurrent } from './scenario.mjs';

const require = createRequire(import.meta.url);

/** Declares the app's tests with `runner` (Jest's or Vitest's globals); `label` names the runner. */
export function describeAppTests({ afterAll, beforeAll, describe, expect, it }, label, title) {
  let redis;
  let app;
  let url;

  beforeAll(async () => {
    redis = await startRedisServer();
    ({ app, url } = await startApp(redis.url));
  });

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
  });

  describe(title, () => {
    it('loads the ES module build on Nest 12', () => {
      expect(require('@nestjs/core/package.json').version).toMatch(/^12\./);
      expect(import.meta.resolve('nestjs-distributed-lock')).toMatch(/\/dist\/esm\/index\.js$/);
      expect(typeof DistributedLockModule.forRoot).toBe('function');
      expect(new LockNotAcquiredError('k', 0)).toBeInstanceOf(Error);
    });

    it('answers 200 on a decorated route, 423 with Retry-After while the key is held', async () => {
      const { free, busy, after } = await routeWhileHeld(app, url, label);
      expect(free.status).toBe(200);
      expect(JSON.parse(free.body)).toMatchObject({ key: `seckill:${label}` });
      expect(busy.status).toBe(423);
      expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(after.status).toBe(200);
    });

    it('hands the lock to using() and current() sees it', async () => {
      const seen = await usingAndCurrent(app);
      expect(seen.fencingToken).toBeGreaterThan(0);
      expect(seen.sameAsCurrent).toBe(true);
    });

    it('releases what it holds on app.close() and leaves the process free to exit', async () => {
      const closed = await closeWhileHolding(app, redis.url);
      app = undefined;
      expect(closed.keyLeft).toBe(0);
      expect(await exitsByItself(redis.url)).toBe(0);
    });
  });
}
