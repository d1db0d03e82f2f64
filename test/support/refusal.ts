/*
 * Helpers of the bad-input specs: an engine whose connection is up before counting starts, the
 * calls that take a key and options, and "refused with this error, nothing sent" as one assertion.
 */
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { InspectionKeys } from '../../lib/core/inspection/inspection-keys';
import { commandsDuring, LockEnv } from './lock-env';
import { pubsubChannels } from './redis-assertions';
import { waitUntil } from './wait';

/**
 * An engine on a client that is connected before counting starts, so that connection set-up
 * (HELLO, INFO) never shows up as "a command sent by the call under test".
 */
export async function engineOnConnectedClient(env: LockEnv, keyPrefix: string): Promise<LockEngine> {
  const client = env.client();
  await client.ping();
  // These specs count the commands one call sends: the registry of held locks writes on a timer of its
  // own (a grant held ≥ 250 ms), which a loaded machine would let into the count.
  const engine = env.engine({ redis: client, keyPrefix, inspection: false });
  // On a connected client the engine starts its ACL check (EVAL_RO) at once, and it runs before the
  // first script: one lock taken and given back here lets it finish before a spec counts commands.
  const warm = await engine.tryAcquire('engine-warm-up');
  await warm?.release();
  // The first lock call also subscribed the engine's force-release notice channel: confirmed before
  // counting, so the SUBSCRIBE never shows up as sent by a call under test.
  const channel = new InspectionKeys(keyPrefix).notice(engine.engineId);
  await waitUntil(async () => (await pubsubChannels(client)).includes(channel), {
    description: 'the notice subscription',
  });
  return engine;
}

/** The three calls that take a key and options, by name. */
export function lockCalls(
  engine: LockEngine,
  key: unknown,
  options?: unknown,
): [string, () => Promise<unknown>][] {
  const k = key as string;
  const o = options as LockOptions;
  return [
    ['acquire', () => engine.acquire(k, o)],
    ['tryAcquire', () => engine.tryAcquire(k, o)],
    ['using', () => engine.using(k, o, async () => 'ran')],
  ];
}

/** Every call with `key`/`options` rejects (never throws) with `type` matching `message`, and no command reaches Redis. */
export async function expectRefused(
  env: LockEnv,
  engine: LockEngine,
  key: unknown,
  options: unknown,
  type: typeof TypeError | typeof RangeError,
  message: RegExp,
): Promise<void> {
  const sent = await commandsDuring(env.server.port, async () => {
    for (const [name, call] of lockCalls(engine, key, options)) {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = call())).not.toThrow(); // a rejected promise, not a synchronous throw
      const err = await promise!.catch((e: unknown) => e);
      expect({ call: name, type: (err as Error)?.constructor?.name }).toEqual({
        call: name,
        type: type.name,
      });
      expect((err as Error).message).toMatch(message);
    }
  });
  expect(sent).toEqual({});
}
