/*
 * A grant whose reply the caller handles only after the lease it won has run out here (a GC pause,
 * SIGSTOP, a blocked event loop between sending the attempt and reading its answer), in virtual time:
 * the caller is not handed a lock it no longer holds. The late grant is given back and the call goes
 * on as if the lock had been busy: it retries within `waitMs`, or answers as a timeout does. Found by
 * the simulator (seeds 2018 and 2326: a semaphore handle whose signal was aborted as it was returned,
 * its token below those of the grants made meanwhile). A multi-key round read that late gives every
 * key back the same way.
 */
import { LockNotAcquiredError } from '../../lib/core/errors';
import { KeySpace, type LockKindTag } from '../../lib/core/kinds/key-space';
import type { LockOptions } from '../../lib/core/options/lock-options';
import { VirtualLab, type LabProcess } from '../sim/virtual-lab';

let lab: VirtualLab;
beforeEach(() => {
  lab = new VirtualLab();
});
afterEach(async () => {
  await lab.close();
});

const kinds: [string, LockOptions, LockKindTag][] = [
  ['reentrant mutex', {}, 'm'],
  ['token lock', { reentrant: false }, 'm'],
  ['semaphore', { limit: 1 }, 'sem'],
];

describe.each(kinds)('a %s granted while its caller is paused past the lease', (_kind, options, tag) => {
  const lock = (key: string): string => new KeySpace('lock:').names(key, tag).lock;

  it('answers as not acquired when waitMs has run out, and gives the late grant back', async () => {
    const caller = await lab.warmProcess();
    await lab.warm(caller.engine, options);
    const asked = lab.now;
    const call = lab.watch(caller.engine.acquire('stock:1', { ...options, waitMs: 400, leaseMs: 600 }));
    // The attempt is on its way; the process stops before its answer comes back (1 ms later).
    caller.process.pause(1_000);
    await lab.until(() => call.at !== undefined);
    expect(call.at! - asked).toBeCloseTo(1_000, 6);
    // Redis granted it (the script ran half a millisecond after the request).
    const granted = lab.runs().filter((r) => r.at > asked && Array.isArray(r.reply) && r.reply[0] === 1);
    expect(granted).toHaveLength(1);
    expect(call.error).toBeInstanceOf(LockNotAcquiredError);
    expect(call.value).toBeUndefined();
    expect((call.error as Error).message).toMatch(/after its lease \(600 ms\) had run out/);
    expect(caller.engine.stats()).toMatchObject({ held: 0 });
    // Nothing of the late grant is left in Redis for long: what the lease had not ended, the give-back does.
    await lab.advance(2);
    expect(lab.pttl(lock('stock:1'))).toBe(-2);
  });

  it('retries within waitMs, for a fresh lease and a token above the grants made meanwhile', async () => {
    const caller = await lab.warmProcess();
    const other = await lab.warmProcess();
    await lab.warm(caller.engine, options);
    await lab.warm(other.engine, options);
    const asked = lab.now;
    const call = lab.watch(caller.engine.acquire('stock:2', { ...options, waitMs: 3_000, leaseMs: 600 }));
    caller.process.pause(1_000);
    // Redis let the caller's lease go at 600 ms: another process takes the lock and gives it back.
    await lab.advance(700);
    const meanwhile = await lab.settle(other.engine.acquire('stock:2', { ...options, waitMs: 0 }));
    await lab.settle(meanwhile.release());
    await lab.until(() => call.at !== undefined);
    const handle = call.value!;
    expect(handle).toBeDefined();
    // Granted by a retry after the pause, not by the answer that came back too late.
    expect(call.at! - asked).toBeGreaterThan(1_000);
    expect(handle.fencingToken).toBeGreaterThan(meanwhile.fencingToken);
    expect(handle.signal.aborted).toBe(false);
    expect(handle.isHeld).toBe(true);
    expect(handle.remainingMs()).toBeGreaterThan(500);
    expect(lab.pttl(lock('stock:2'))).toBeGreaterThan(500);
    expect(await lab.settle(handle.release())).toBe(true);
  });
});

const multiKinds: [string, LockOptions][] = [
  ['reentrant mutex', {}],
  ['token lock', { reentrant: false }],
];

describe.each(multiKinds)(
  'a multi-key %s granted while its caller is paused past the lease',
  (_kind, options) => {
    const lock = (key: string): string => new KeySpace('lock:').names(key, 'm').lock;

    /** A warm process that has also run a multi-key call: its next round is on the wire at once. */
    const warmProcess = async (): Promise<LabProcess> => {
      const made = await lab.warmProcess();
      await lab.warm(made.engine, options);
      const handle = await lab.settle(made.engine.acquire(['lab:warm-a', 'lab:warm-b'], options));
      await lab.settle(handle.release());
      return made;
    };

    /** The grants of `keys` Redis made from true time `since` on, with when each ran. */
    const grantsOf = (keys: string[], since: number): number[] =>
      lab
        .runs('multi-acquire', since)
        .filter((r) => r.keys.includes(lock(keys[0]!)) && (r.reply as unknown[])[0] === 1)
        .map((r) => r.at - since);

    it('answers as not acquired when waitMs has run out, and gives every key back', async () => {
      const caller = await warmProcess();
      const other = await warmProcess();
      const keys = ['order:1', 'stock:1'];
      const asked = lab.now;
      const call = lab.watch(caller.engine.acquire(keys, { ...options, waitMs: 400, leaseMs: 600 }));
      // Paused past the lease's local end (592 ms: 600 less the drift allowance) but not past Redis'
      // (600.5 ms from the script's run): the keys are still granted in Redis when the answer is read.
      caller.process.pause(595);
      await lab.until(() => call.at !== undefined);
      // Redis granted the round half a millisecond after the request, before the pause ended.
      expect(grantsOf(keys, asked)).toEqual([expect.closeTo(0.5, 3)]);
      expect(call.at! - asked).toBeGreaterThanOrEqual(595);
      expect(call.at! - asked).toBeLessThan(598);
      expect(call.error).toBeInstanceOf(LockNotAcquiredError);
      expect(call.value).toBeUndefined();
      expect((call.error as Error).message).toMatch(/after its lease \(600 ms\) had run out/);
      expect(caller.engine.stats()).toMatchObject({ held: 0 });
      // Before Redis' lease ends, the give-back has freed every key: another caller takes them at once.
      await lab.advance(2);
      expect(lab.now - asked).toBeLessThan(600.5);
      for (const key of keys) expect(lab.pttl(lock(key))).toBe(-2);
      const next = await lab.settle(other.engine.tryAcquire(keys, options));
      expect(next).not.toBeNull();
      await lab.settle(next!.release());
    });

    it('retries within waitMs, for fresh leases and tokens above the grants made meanwhile', async () => {
      const caller = await warmProcess();
      const other = await warmProcess();
      const keys = ['order:2', 'stock:2'];
      const asked = lab.now;
      const call = lab.watch(caller.engine.acquire(keys, { ...options, waitMs: 3_000, leaseMs: 600 }));
      caller.process.pause(1_000);
      // Redis let the caller's leases go at 600.5 ms: another process takes both keys and gives them back.
      await lab.advance(700);
      expect(grantsOf(keys, asked)).toEqual([expect.closeTo(0.5, 3)]);
      const meanwhile = await lab.settle(other.engine.acquire(keys, { ...options, waitMs: 0 }));
      await lab.settle(meanwhile.release());
      await lab.until(() => call.at !== undefined);
      const handle = call.value!;
      expect(handle).toBeDefined();
      // Granted by a retry after the pause, not by the answer that came back too late.
      expect(grantsOf(keys, asked)).toHaveLength(3);
      expect(call.at! - asked).toBeGreaterThan(1_000);
      for (const key of keys) {
        expect(handle.fencingTokens[key]).toBeGreaterThan(meanwhile.fencingTokens[key]!);
        expect(lab.pttl(lock(key))).toBeGreaterThan(500);
      }
      expect(handle.signal.aborted).toBe(false);
      expect(handle.isHeld).toBe(true);
      expect(handle.remainingMs()).toBeGreaterThan(500);
      expect(await lab.settle(handle.release())).toBe(true);
    });
  },
);
