/*
 * The in-memory backend's twin of test/reliability/event-loop-stall.spec.ts: an event loop held up
 * longer than a call's budget (a GC pause, a synchronous stretch, a starved test worker) after the
 * backend answered. The reply was ready in time, so the call takes it, as a call on Redis takes the
 * reply waiting in its socket: the backend must not fail `waitMs: 0` with "did not answer within
 * 401 ms" where Redis would not.
 */
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { createInMemoryLockEngine } from '../../lib/testing/create-in-memory-lock-engine';
import { stallLoop } from '../support/stall-loop';

/** Holds the loop up after `call` sent its script (after its microtasks), before its reply turn. */
async function stalledAfter<T>(call: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown }> {
  const outcome = call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await Promise.resolve();
  stallLoop(ms);
  return outcome;
}

let engine: LockEngine;
beforeEach(() => {
  engine = createInMemoryLockEngine();
});
afterEach(() => engine.close());

describe('an in-memory reply through an event-loop stall past its budget', () => {
  it.each([
    ['a reentrant mutex', {}],
    ['a token lock', { reentrant: false }],
    ['a read lock', { mode: 'read' }],
    ['a semaphore permit', { limit: 2 }],
  ] as const)('grants %s under waitMs 0 after a 700 ms stall', async (_label, options) => {
    const outcome = await stalledAfter(engine.acquire('stalled', { ...options, waitMs: 0 }), 700);
    expect('error' in outcome ? String(outcome.error) : 'granted').toBe('granted');
    expect(await (outcome as { value: Awaited<ReturnType<LockEngine['acquire']>> }).value.release()).toBe(
      true,
    );
  });

  it('takes several keys under waitMs 0 after a 700 ms stall', async () => {
    const outcome = await stalledAfter(engine.acquire(['x', 'y', 'z'], { waitMs: 0 }), 700);
    expect('error' in outcome ? String(outcome.error) : 'granted').toBe('granted');
    expect(await (outcome as { value: Awaited<ReturnType<LockEngine['acquire']>> }).value.release()).toBe(
      true,
    );
  });

  it('answers busy, not a backend failure, when the lock was held through the stall', async () => {
    const held = await engine.acquire('busy');
    const other = createInMemoryLockEngine({ replicaOf: engine });
    try {
      const outcome = await stalledAfter(other.acquire('busy', { waitMs: 0 }), 700);
      expect('error' in outcome ? (outcome.error as Error).name : 'granted').toBe('LockNotAcquiredError');
    } finally {
      await held.release();
      await other.close();
    }
  });
});
