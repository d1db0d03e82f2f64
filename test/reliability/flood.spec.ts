/*
 * Floods (RELIABILITY.md scenario 20, issue 18 point 4): tens of thousands of waiters on one key in
 * one process, all sharing one AbortSignal, all settle; no listener warning; nothing left in Redis
 * or in the engine. A per-key bound (maxWaitersPerKey) fails excess callers at once with
 * LockNotAcquiredError. Settling times and event-loop lag are measured by `npm run bench`
 * (bench scenario "flood"), never asserted here.
 */
import { LockNotAcquiredError } from '../../lib/core/errors';
import { keysWithoutTtl, pubsubChannels } from '../support/redis-assertions';
import { uniqueKey, useLockEnv } from '../support/lock-env';

const PREFIX = 'flood:';
const env = useLockEnv({ keyPrefix: PREFIX });

let warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

describe('a flood of waiters on one key', () => {
  it('settles 20,000 waiters that share one signal, with no listener warning and nothing left behind', async () => {
    const engine = env.engine({ maxWaitersPerKey: 25_000 });
    const key = uniqueKey('flood');
    const holder = await engine.acquire(key, { waitMs: 0 });
    const shared = new AbortController();
    const n = 20_000;
    const waiters = Array.from({ length: n }, (_, i) =>
      // Half give up by their waitMs, half by the shared signal.
      engine.acquire(key, i % 2 === 0 ? { waitMs: 1_500 } : { waitMs: 60_000, signal: shared.signal }),
    );
    const settled = Promise.allSettled(waiters);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    shared.abort(new Error('caller gave up'));
    const results = await settled;
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    const reasons = results.map((r) => (r as PromiseRejectedResult).reason as Error);
    expect(reasons.filter((e) => e instanceof LockNotAcquiredError)).toHaveLength(n / 2);
    expect(reasons.filter((e) => e.message === 'caller gave up')).toHaveLength(n / 2);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    expect(await holder.release()).toBe(true);
    expect(engine.stats()).toMatchObject({ held: 0, waitingLocks: 0, channels: 0 });
    expect(await env.admin.keys(`${PREFIX}*:m`)).toEqual([]);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
    await engine.close();
    expect(await pubsubChannels(env.admin)).toEqual([]);
  });

  it('fails callers beyond maxWaitersPerKey at once with LockNotAcquiredError; tryAcquire gets null', async () => {
    const engine = env.engine({ maxWaitersPerKey: 100 });
    const key = uniqueKey('bound');
    const holder = await engine.acquire(key, { waitMs: 0 });
    const pending = new AbortController();
    let settledEarly = 0;
    const queued = Array.from({ length: 100 }, () =>
      engine.acquire(key, { waitMs: 60_000, signal: pending.signal }).finally(() => settledEarly++),
    );
    const refused = (await engine.acquire(key, { waitMs: 60_000 }).catch((e: unknown) => e)) as Error;
    expect(refused).toBeInstanceOf(LockNotAcquiredError);
    expect(refused.message).toMatch(/100 callers of this process already wait for it \(maxWaitersPerKey\)/);
    await expect(engine.tryAcquire(key, { waitMs: 60_000 })).resolves.toBeNull();
    // The refusals came while all 100 queued callers were still waiting.
    expect(settledEarly).toBe(0);
    pending.abort();
    await Promise.allSettled(queued);
    // With room again, a caller queues and gets the lock once it is free.
    const next = engine.acquire(key, { waitMs: 60_000 });
    expect(await holder.release()).toBe(true);
    expect(await (await next).release()).toBe(true);
  });

  it('refuses a bad maxWaitersPerKey before connecting', () => {
    expect(() => env.engine({ maxWaitersPerKey: 0 })).toThrow(RangeError);
    expect(() => env.engine({ maxWaitersPerKey: 1.5 })).toThrow(/whole number/);
    expect(() => env.engine({ maxWaitersPerKey: '10' as unknown as number })).toThrow(TypeError);
  });
});
