/*
 * A wait that runs out while its last attempt is unanswered, in virtual time. The attempt sent near the
 * end of a wait is bounded by the wait (waitMs + ATTEMPT_MARGIN_MS), not by commandTimeoutMs: when that
 * bound ends it and the lock was seen busy, the caller hears LockNotAcquiredError (busy, as waitMs
 * promised), not LockRedisError, which says Redis failed. A fresh-clone CI run met it in
 * test/reliability/flood.spec.ts: 20,000 waiters settling at once stalled the process and the Redis
 * beside it past the 400 ms margin. Without evidence of busy (a first attempt), or when commandTimeoutMs
 * ends the command, the answer stays LockRedisError.
 */
import { LockNotAcquiredError, LockRedisError } from '../../lib/core';
import { VirtualLab } from '../sim/virtual-lab';

/** The message of a wait that ended busy with its last attempt unanswered. */
const BUSY_AT_WAIT_END =
  /busy when last asked; the attempt sent as the wait ended got no answer within \d+ ms; gave up after \d+ ms/;

let lab: VirtualLab;

/** Lets `call` run `ms`, still unsettled, then pauses the server 2 s (CLIENT PAUSE) until it settles. */
async function pauseUntilSettled(call: { at?: number }, ms: number): Promise<void> {
  await lab.advance(ms);
  expect(call.at).toBeUndefined();
  lab.server.pause(2_000);
  await lab.until(() => call.at !== undefined);
}

beforeEach(() => {
  lab = new VirtualLab();
});
afterEach(async () => {
  await lab.close();
});

describe('the last attempt of a wait, unanswered when the wait ends', () => {
  it('is busy when the lock was seen busy and the wait bounded the command', async () => {
    const holder = await lab.warmProcess({ commandTimeoutMs: 5_000 });
    const waiter = await lab.warmProcess({ commandTimeoutMs: 5_000 });
    const held = await lab.settle(holder.engine.acquire('stock:1'));
    const asked = lab.now;
    const call = lab.watch(waiter.engine.acquire('stock:1', { waitMs: 500 }));
    // Busy on the first attempt; backoff retries until the wait's end. CLIENT PAUSE from 450 ms on,
    // for 2 s: the attempts sent from then on wait in the server past the wait's end.
    await pauseUntilSettled(call, 450);
    expect(call.error).toBeInstanceOf(LockNotAcquiredError);
    expect((call.error as Error).message).toMatch(BUSY_AT_WAIT_END);
    // Settled at the last attempt's bound (sent by the wait's end, plus the 400 ms margin at most).
    expect(call.at! - asked).toBeGreaterThan(500);
    expect(call.at! - asked).toBeLessThanOrEqual(901);
    await lab.advance(2_000);
    expect(await lab.settle(held.release())).toBe(true);
    expect(waiter.engine.stats()).toMatchObject({ held: 0, waitingLocks: 0 });
  });

  it('is busy for several keys too, and leaves every key free', async () => {
    const holder = await lab.warmProcess({ commandTimeoutMs: 5_000 });
    const waiter = await lab.warmProcess({ commandTimeoutMs: 5_000 });
    const held = await lab.settle(holder.engine.acquire('stock:4b'));
    const call = lab.watch(waiter.engine.acquire(['stock:4a', 'stock:4b'], { waitMs: 500 }));
    await pauseUntilSettled(call, 450);
    expect(call.error).toBeInstanceOf(LockNotAcquiredError);
    expect((call.error as Error).message).toMatch(BUSY_AT_WAIT_END);
    await lab.advance(2_000);
    expect(await lab.settle(held.release())).toBe(true);
    // The paused round took nothing that stays: both keys can be taken at once.
    const after = await lab.settle(holder.engine.acquire(['stock:4a', 'stock:4b'], { waitMs: 0 }));
    expect(await lab.settle(after.release())).toBe(true);
    expect(waiter.engine.stats()).toMatchObject({ held: 0, waitingLocks: 0 });
  });

  it('is a Redis failure when nothing was seen busy (a first attempt)', async () => {
    const caller = await lab.warmProcess({ commandTimeoutMs: 5_000 });
    lab.server.pause(2_000);
    const call = lab.watch(caller.engine.acquire('stock:2', { waitMs: 300 }));
    await lab.until(() => call.at !== undefined);
    expect(call.error).toBeInstanceOf(LockRedisError);
    expect((call.error as Error).message).toMatch(/did not answer mutex-acquire within 700 ms/);
    await lab.advance(2_000);
  });

  it('is a Redis failure when commandTimeoutMs, not the wait, ended the command', async () => {
    const holder = await lab.warmProcess({ commandTimeoutMs: 5_000 });
    const waiter = await lab.warmProcess({ commandTimeoutMs: 200 });
    const held = await lab.settle(holder.engine.acquire('stock:3'));
    const call = lab.watch(waiter.engine.acquire('stock:3', { waitMs: 500 }));
    await pauseUntilSettled(call, 350);
    expect(call.error).toBeInstanceOf(LockRedisError);
    expect((call.error as Error).message).toMatch(/did not answer mutex-acquire within 200 ms/);
    await lab.advance(2_000);
    expect(await lab.settle(held.release())).toBe(true);
  });
});
