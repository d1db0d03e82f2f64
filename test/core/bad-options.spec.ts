/*
 * Bad options (rows of the bad-input table in RELIABILITY.md): durations and option names refused
 * before any I/O (INFO commandstats shows no command reached Redis; bad engine options open no
 * connection), and a key that holds application data is reported and never touched.
 */
import type Redis from 'ioredis';
import { createLockEngine } from '../../lib/core/topology/create-lock-engine';
import { LockWrongTypeError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { commandsDuring, uniqueKey, useLockEnv } from '../support/lock-env';
import { engineOnConnectedClient, expectRefused, lockCalls } from '../support/refusal';

const PREFIX = 'badopt:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;

beforeEach(async () => {
  engine = await engineOnConnectedClient(env, PREFIX);
});

describe('durations and options refused before any I/O', () => {
  const bad: [string, unknown, typeof TypeError | typeof RangeError, RegExp][] = [
    ['NaN', NaN, RangeError, /must be finite, got NaN/],
    ['Infinity', Infinity, RangeError, /must be finite/],
    ['-Infinity', -Infinity, RangeError, /must be finite/],
    ['negative', -1, RangeError, /at least/],
    ['fractional', 1.5, RangeError, /whole number/],
    ['a string', '100', TypeError, /must be a number of milliseconds/],
    ['null', null, TypeError, /must be a number/],
    ['beyond setTimeout', 2 ** 31, RangeError, /at most 2147483647/],
  ];
  it.each(bad)('refuses waitMs %s', async (_label, value, type, message) => {
    await expectRefused(
      env,
      engine,
      uniqueKey('wait'),
      { waitMs: value },
      type,
      new RegExp(`^waitMs .*${message.source}`),
    );
  });
  it.each([...bad, ['0', 0, RangeError, /at least 1, got 0/] as (typeof bad)[number]])(
    'refuses leaseMs %s',
    async (_label, value, type, message) => {
      await expectRefused(
        env,
        engine,
        uniqueKey('lease'),
        { leaseMs: value },
        type,
        new RegExp(`^leaseMs .*${message.source}`),
      );
    },
  );

  it('accepts waitMs 0 (a single attempt)', async () => {
    const handle = await engine.acquire(uniqueKey('zero'), { waitMs: 0 });
    expect(await handle.release()).toBe(true);
  });

  it.each([
    ['an unknown name', { waitMS: 10 }, TypeError, /Unknown option "waitMS"/],
    ['another unknown name', { timeout: 10 }, TypeError, /Unknown option "timeout".*known options: waitMs/],
    ['options that are a number', 5, TypeError, /lock options must be an object/],
    ['options that are an array', [], TypeError, /lock options must be an object/],
    ['a signal that is not an AbortSignal', { signal: {} }, TypeError, /signal must be an AbortSignal/],
    ['reentrant not a boolean', { reentrant: 'no' }, TypeError, /reentrant must be a boolean/],
    ['an unknown mode', { mode: 'exclusive' }, TypeError, /mode must be 'read' or 'write'/],
    ['limit 0', { limit: 0 }, RangeError, /limit must be a whole number/],
    ['limit fractional', { limit: 1.5 }, RangeError, /limit must be a whole number/],
    ['limit NaN', { limit: NaN }, RangeError, /limit must be a whole number/],
    ['two kinds at once', { mode: 'read', limit: 2 }, TypeError, /at most one of them/],
    ['reentrant: false with a kind', { reentrant: false, fair: true }, TypeError, /cannot be combined/],
  ])('refuses %s', async (_label, options, type, message) => {
    await expectRefused(env, engine, uniqueKey('opts'), options, type, message);
  });

  it('refuses using() without a function, sending nothing', async () => {
    const sent = await commandsDuring(env.server.port, async () => {
      await expect(engine.using(uniqueKey('fn'), {}, undefined as never)).rejects.toThrow(TypeError);
      await expect(engine.using(uniqueKey('fn'), {}, 'fn' as never)).rejects.toThrow(/needs a function/);
    });
    expect(sent).toEqual({});
  });
});

describe('engine options refused before connecting', () => {
  it.each([
    ['an unknown option', { keyprefix: 'x' }, TypeError, /Unknown option "keyprefix"/],
    [
      'an unknown defaults option',
      { defaults: { leaseMS: 5 } },
      TypeError,
      /Unknown option "leaseMS" in defaults/,
    ],
    ['an unknown backoff option', { backoff: { max: 5 } }, TypeError, /Unknown option "max" in backoff/],
    ['watchdogLeaseMs NaN', { watchdogLeaseMs: NaN }, RangeError, /watchdogLeaseMs must be finite/],
    [
      'renewEveryMs not shorter than the lease',
      { watchdogLeaseMs: 1000, renewEveryMs: 1000 },
      RangeError,
      /renewEveryMs/,
    ],
    [
      'backoff.initialMs 0',
      { backoff: { initialMs: 0 } },
      RangeError,
      /backoff.initialMs must be at least 1/,
    ],
    ['backoff.maxMs below initialMs', { backoff: { initialMs: 50, maxMs: 10 } }, RangeError, /backoff.maxMs/],
    ['fenceTtlMs negative', { fenceTtlMs: -1 }, RangeError, /fenceTtlMs must be at least/],
    [
      'commandTimeoutMs fractional',
      { commandTimeoutMs: 1.5 },
      RangeError,
      /commandTimeoutMs must be a whole number/,
    ],
    [
      'defaults.waitMs Infinity',
      { defaults: { waitMs: Infinity } },
      RangeError,
      /defaults.waitMs must be finite/,
    ],
    ['defaults.leaseMs 0', { defaults: { leaseMs: 0 } }, RangeError, /defaults.leaseMs must be at least 1/],
    ['cohort.fair not a boolean', { cohort: { fair: 'yes' } }, TypeError, /cohort.fair must be a boolean/],
    ['a keyPrefix with a brace', { keyPrefix: 'app{1}:' }, TypeError, /keyPrefix must not contain/],
    ['a redis URL that is not one', { redis: 'localhost:6379' }, TypeError, /redis:\/\/ or rediss:\/\/ URL/],
  ])('refuses %s and opens no connection', async (_label, options, type, message) => {
    const before = Number((await statsField('total_connections_received')) ?? 0);
    const sent = await commandsDuring(
      env.server.port,
      async () => {
        expect(() => createLockEngine({ redis: env.url, ...(options as object) })).toThrow(type);
        expect(() => createLockEngine({ redis: env.url, ...(options as object) })).toThrow(message);
      },
      { settle: false },
    );
    expect(sent).toEqual({});
    expect(Number(await statsField('total_connections_received'))).toBe(before + 2); // the two INFO probes only
  });
});

/** A field of INFO stats, read over the admin connection (which opens no new connection). */
async function statsField(name: string): Promise<string | undefined> {
  const text = await env.admin.info('stats');
  return new RegExp(`^${name}:(\\S+)`, 'm').exec(text)?.[1];
}

describe('a key that holds application data', () => {
  const foreign: [
    string,
    (admin: Redis, name: string) => Promise<unknown>,
    (admin: Redis, name: string) => Promise<unknown>,
  ][] = [
    ['a list', (a, n) => a.lpush(n, 'job-1', 'job-2'), (a, n) => a.lrange(n, 0, -1)],
    ['a string without TTL', (a, n) => a.set(n, 'app value'), (a, n) => a.get(n)],
    ['a hash without TTL', (a, n) => a.hset(n, 'field', 'v'), (a, n) => a.hgetall(n)],
    ['a set', (a, n) => a.sadd(n, 'm1'), (a, n) => a.smembers(n)],
    ['a sorted set', (a, n) => a.zadd(n, '1', 'm1'), (a, n) => a.zrange(n, '0', '-1')],
  ];
  it.each(foreign)(
    'reports %s at the lock key with LockWrongTypeError and leaves it untouched',
    async (_label, write, read) => {
      const key = uniqueKey('foreign');
      const name = keys.names(key, 'm').lock;
      await write(env.admin, name);
      const before = { type: await env.admin.type(name), value: await read(env.admin, name) };
      for (const [label, call] of [
        ...lockCalls(engine, key, { waitMs: 10_000 }),
        ['token lock', () => engine.acquire(key, { reentrant: false, waitMs: 10_000 })] as const,
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect({ label, err }).toEqual({ label, err: expect.any(LockWrongTypeError) });
        expect((err as LockWrongTypeError).name).toBe('LockWrongTypeError');
        expect((err as LockWrongTypeError).redisKey).toBe(name);
        expect((err as LockWrongTypeError).key).toBe(key);
        expect((err as Error).message).toMatch(/left untouched/);
      }
      expect({ type: await env.admin.type(name), value: await read(env.admin, name) }).toEqual(before);
      expect(await env.admin.pttl(name)).toBe(-1);
      expect(engine.stats()).toMatchObject({ held: 0, waitingLocks: 0 });
    },
  );
});
