/*
 * Bad input to multi-key calls is refused with a TypeError/RangeError as a rejected promise before
 * any command (INFO commandstats unchanged), as single-key bad input is (test/core/bad-keys.spec.ts).
 */
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { MAX_MULTI_KEYS } from '../../lib/core';
import { commandsDuring, useLockEnv } from '../support/lock-env';
import { engineOnConnectedClient } from '../support/refusal';

const env = useLockEnv();
let engine: LockEngine;

beforeEach(async () => {
  engine = await engineOnConnectedClient(env, 'mbad:');
});

async function expectRefused(
  keys: unknown,
  options: unknown,
  type: typeof TypeError,
  message: RegExp,
): Promise<void> {
  const k = keys as string[];
  const o = options as object;
  const calls: [string, () => Promise<unknown>][] = [
    ['acquire', () => engine.acquire(k, o)],
    ['tryAcquire', () => engine.tryAcquire(k, o)],
    ['using', () => engine.using(k, o, async () => 'ran')],
  ];
  const sent = await commandsDuring(env.server.port, async () => {
    for (const [name, call] of calls) {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = call())).not.toThrow();
      const err = (await promise!.catch((e: unknown) => e)) as Error;
      expect({ call: name, type: err?.constructor?.name }).toEqual({ call: name, type: type.name });
      expect(err.message).toMatch(message);
    }
  });
  expect(sent).toEqual({});
}

it('sees the commands of a valid multi-key call (so an empty delta below means something)', async () => {
  const sent = await commandsDuring(env.server.port, async () => {
    const handle = await engine.acquire(['probe:a', 'probe:b'], { waitMs: 0 });
    await handle.release();
  });
  expect((sent.evalsha ?? 0) + (sent.eval ?? 0)).toBeGreaterThanOrEqual(2);
});

it.each([
  ['an empty array', [], {}, RangeError, /must not be an empty array/],
  [
    `${MAX_MULTI_KEYS + 1} keys`,
    Array.from({ length: MAX_MULTI_KEYS + 1 }, (_, i) => `k${i}`),
    {},
    RangeError,
    new RegExp(`${MAX_MULTI_KEYS + 1} lock keys were given; at most ${MAX_MULTI_KEYS}`),
  ],
  ['a number member', ['a', 42], {}, TypeError, /lock key at index 1 must be a string, got number 42/],
  ['a null member', [null, 'a'], {}, TypeError, /lock key at index 0 must be a string, got null/],
  ['a nested array', [['a']], {}, TypeError, /lock key at index 0 must be a string, got an array/],
  ['an empty member', ['a', ''], {}, RangeError, /lock key at index 1 must not be empty/],
  ['a member over 512 bytes', ['a', 'k'.repeat(513)], {}, RangeError, /index 1 is 513 bytes long/],
  ['mode', ['a', 'b'], { mode: 'read' }, TypeError, /"mode" option cannot be used with several keys/],
  ['fair', ['a', 'b'], { fair: true }, TypeError, /"fair" option cannot be used with several keys/],
  ['limit', ['a', 'b'], { limit: 2 }, TypeError, /"limit" option cannot be used with several keys/],
  ['an unknown option', ['a', 'b'], { wait: 1 }, TypeError, /Unknown option "wait"/],
])('refuses %s before any command', async (_label, keys, options, type, message) => {
  await expectRefused(keys, options, type, message);
});

it('accepts exactly the maximum number of members, duplicates counted but taken once', async () => {
  const keys = Array.from({ length: MAX_MULTI_KEYS - 1 }, (_, i) => `max:${i}`);
  const handle = await engine.acquire([...keys, keys[0]!], { waitMs: 0 });
  expect(handle.keys).toHaveLength(MAX_MULTI_KEYS - 1);
  expect(await handle.release()).toBe(true);
});
