/*
 * Bad options for the read-write lock, fair lock and semaphore are refused with a TypeError or
 * RangeError naming the option, before any command reaches Redis (counted with INFO commandstats).
 */
import { LockEngine } from '../../lib/core/engine/lock-engine';
import { commandCounts, uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV } from '../support/family-locks';
import { waitUntil } from '../support/wait';

// One engine for every test (built below): no clean-up between tests.
const env = useLockEnv({ ...FAMILY_ENV, cleanupAfterEach: false });
let engine: LockEngine;
beforeAll(async () => {
  engine = env.engine();
  // Warm the connection up, so that its start-up commands are not counted below.
  const h = await engine.acquire(uniqueKey('warm-up'), { limit: 1 });
  await h.release();
  // The first lock call also starts the engine's force-release notice subscription, beside the call:
  // counted only once it is in place, or its SUBSCRIBE can land inside a test's counting window.
  await waitUntil(
    async () =>
      ((await env.admin.pubsub('CHANNELS', `*:notice:${engine.engineId}`)) as string[]).length === 1,
  );
});

const cases: [string, unknown, ErrorConstructor, RegExp][] = [
  ['limit 0', { limit: 0 }, RangeError, /limit/],
  ['a negative limit', { limit: -2 }, RangeError, /limit/],
  ['a fractional limit', { limit: 1.5 }, RangeError, /limit/],
  ['a NaN limit', { limit: NaN }, RangeError, /limit/],
  ['an infinite limit', { limit: Infinity }, RangeError, /limit/],
  ['a limit above one million', { limit: 1_000_001 }, RangeError, /limit/],
  ['a limit given as a string', { limit: '3' }, TypeError, /limit/],
  ['an unknown mode', { mode: 'exclusive' }, TypeError, /mode/],
  ['a mode in capitals', { mode: 'READ' }, TypeError, /mode/],
  ['a mode that is not a string', { mode: 1 }, TypeError, /mode/],
  ['fair that is not a boolean', { fair: 'yes' }, TypeError, /fair/],
  ['fair with a mode', { fair: true, mode: 'read' }, TypeError, /mode, fair and limit/],
  ['fair with a limit', { fair: true, limit: 2 }, TypeError, /mode, fair and limit/],
  ['a mode with a limit', { mode: 'write', limit: 2 }, TypeError, /mode, fair and limit/],
  ['reentrant: false with a mode', { reentrant: false, mode: 'read' }, TypeError, /reentrant/],
  ['reentrant: false with fair', { reentrant: false, fair: true }, TypeError, /reentrant/],
  ['reentrant: false with a limit', { reentrant: false, limit: 2 }, TypeError, /reentrant/],
  ['a misspelt option', { mode: 'read', limits: 2 }, TypeError, /"limits"/],
];

describe('bad options of the read-write lock, fair lock and semaphore', () => {
  it.each(cases)('refuses %s before sending anything', async (_label, options, type, message) => {
    const key = uniqueKey('bad');
    const before = await commandCounts(env.server.port);
    for (const call of [
      () => engine.acquire(key, options as never),
      () => engine.tryAcquire(key, options as never),
      () => engine.using(key, options as never, async () => 'never runs'),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
    }
    const after = await commandCounts(env.server.port);
    for (const name of ['evalsha', 'eval', 'publish', 'subscribe']) {
      expect(`${name}: ${after.get(name) ?? 0}`).toBe(`${name}: ${before.get(name) ?? 0}`);
    }
    expect(await env.admin.keys(`*${key}*`)).toEqual([]);
  });
});

describe('the command probe of these tests', () => {
  it('does see the scripts that a valid acquisition sends (so the checks above can fail)', async () => {
    const before = await commandCounts(env.server.port);
    const h = await engine.acquire(uniqueKey('probe'), { mode: 'read' });
    await h.release();
    const after = await commandCounts(env.server.port);
    const scripts = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    expect(scripts('evalsha') + scripts('eval')).toBeGreaterThanOrEqual(2);
  });
});
