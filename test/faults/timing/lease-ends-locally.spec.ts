/*
 * A fixed lease ends in this process before Redis can expire it (the drift allowance, 1 % + 2 ms):
 * the handle's signal aborts while Redis still holds the key, so a holder learns of the end before
 * anyone else can be granted the lock. The margin of a 3 s lease is 32 ms, so the assertion needs
 * the holder's timer to fire on time: it runs in band (moved from test/core/extend-and-reentry.spec.ts
 * after a loaded parallel run fired the timer late).
 */
import { KeySpace } from '../../../lib/core/kinds/key-space';
import type { LockEngine } from '../../../lib/core/engine/lock-engine';
import { uniqueKey, useLockEnv, whenAborted } from '../../support/lock-env';
import { engineOnConnectedClient } from '../../support/refusal';

const PREFIX = 'extend:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;

beforeEach(async () => {
  engine = await engineOnConnectedClient(env, PREFIX);
});

describe('a fixed lease ends locally first', () => {
  it('aborts the signal while Redis still holds the key (drift allowance)', async () => {
    const key = uniqueKey('drift');
    const handle = await engine.acquire(key, { waitMs: 0, leaseMs: 3_000 });
    await whenAborted(handle.signal);
    // 3 s lease: the local end is 32 ms before Redis can expire it.
    expect(await env.admin.pttl(keys.names(key).lock)).toBeGreaterThan(0);
    expect(handle.isHeld).toBe(false);
    // Reported lost, so release() says "not held" (it still deletes the key: nobody else has it).
    expect(await handle.release()).toBe(false);
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  });
});
