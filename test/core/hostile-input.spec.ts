/*
 * Hostile input (the last rows of the bad-input table in RELIABILITY.md, issue 18 points 2 and 7):
 * option objects with getters, Proxies and a polluted Object.prototype are read once, own
 * properties only; control characters in keys are escaped in every message; sparse arrays of keys
 * are refused before any command.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import { LockNotAcquiredError } from '../../lib/core/errors';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { keysWithoutTtl } from '../support/redis-assertions';
import { commandsDuring, uniqueKey, useLockEnv } from '../support/lock-env';
import { engineOnConnectedClient } from '../support/refusal';

const PREFIX = 'hostile:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;

beforeEach(async () => {
  engine = await engineOnConnectedClient(env, PREFIX);
});

/** Sets `Object.prototype[name]` for the duration of `fn` (never left behind). */
async function withPollutedPrototype<T>(name: string, value: unknown, fn: () => Promise<T>): Promise<T> {
  Object.defineProperty(Object.prototype, name, { value, configurable: true, writable: true });
  try {
    return await fn();
  } finally {
    delete (Object.prototype as Record<string, unknown>)[name];
  }
}

describe('option objects are read once, own properties only', () => {
  it('reads a getter once: a value that changes after validation never reaches Redis', async () => {
    const key = uniqueKey('getter');
    let reads = 0;
    const options = {
      waitMs: 0,
      get leaseMs(): number {
        reads += 1;
        // Valid when validated, invalid on any later read.
        return reads === 1 ? 5_000 : -1;
      },
    };
    const handle = await engine.acquire(key, options);
    expect(reads).toBe(1);
    const pttl = await env.admin.pttl(keys.names(key).lock);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(5_000);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
    expect(await handle.release()).toBe(true);
  });

  it('reads each name of a Proxy once', async () => {
    const reads: string[] = [];
    const options = new Proxy(
      { waitMs: 0, leaseMs: 4_000 },
      {
        get(target, name, receiver) {
          reads.push(String(name));
          return Reflect.get(target, name, receiver) as unknown;
        },
      },
    );
    const handle = await engine.acquire(uniqueKey('proxy'), options);
    expect(reads.sort()).toEqual(['leaseMs', 'waitMs']);
    expect(await handle.release()).toBe(true);
  });

  it('ignores an inherited mode: Object.prototype.mode does not turn a mutex into a read lock', async () => {
    const key = uniqueKey('polluted');
    await withPollutedPrototype('mode', 'read', async () => {
      const first = await engine.acquire(key, { waitMs: 0 });
      // A shared read lock would let a second caller in; a mutex does not.
      await expect(engine.tryAcquire(key, { waitMs: 0 })).resolves.toBeNull();
      expect(await env.admin.exists(keys.names(key, 'rw').lock)).toBe(0);
      expect(await env.admin.exists(keys.names(key).lock)).toBe(1);
      expect(await first.release()).toBe(true);
    });
  });

  it('ignores inherited engine options (a polluted watchdogLeaseMs is not the lease)', async () => {
    const polluted = await withPollutedPrototype('watchdogLeaseMs', 40, async () =>
      env.engine({ keyPrefix: PREFIX }),
    );
    expect(polluted.options.watchdogLeaseMs).toBe(30_000);
  });
});

describe('keys with control characters', () => {
  it('escapes CR/LF in error messages, so a key cannot forge a log line', async () => {
    const key = `${uniqueKey('crlf')}\r\n[Nest] 1 - ERROR forged\u0085\u2028`;
    const holder = await engine.acquire(key, { waitMs: 0 });
    const err = (await engine.acquire(key, { waitMs: 0 }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(LockNotAcquiredError);
    expect(err.message).not.toMatch(/[\r\n\u0085\u2028]/);
    expect(err.message).toContain('\\r\\n[Nest] 1 - ERROR forged\\u0085\\u2028');
    // The key itself round-trips unchanged.
    expect((err as LockNotAcquiredError).key).toBe(key);
    expect(await holder.release()).toBe(true);
  });
});

describe('sparse arrays of keys', () => {
  it('refuses a hole with a TypeError and sends nothing', async () => {
    const sparse = [, 'a'] as unknown as string[];
    const sent = await commandsDuring(env.server.port, async () => {
      const err = (await engine.acquire(sparse).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(TypeError);
      expect(err.message).toMatch(/sparse array: index 0 is a hole/);
      const tried = (await engine.tryAcquire(new Array<string>(2)).catch((e: unknown) => e)) as Error;
      expect(tried).toBeInstanceOf(TypeError);
    });
    expect(sent).toEqual({});
  });
});
