/*
 * Leases in virtual time: the real engine over a simulated Redis (test/sim/virtual-lab.ts), every packet
 * 0.5 ms each way, so each timing below is exact. A fixed lease ends in the holder a drift allowance
 * (1 % + 2 ms) before Redis expires it, also on a clock that runs 1 % slow; the watchdog keeps a lock
 * for as long as it is held; a holder whose renewals cannot get through is told at its local lease end,
 * before Redis frees the key and before anyone else is granted it. (The real-Redis specs keep what only
 * a real server shows: PEXPIRE on the key, a real partition through a TCP proxy.)
 */
import { LockLostError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { leaseDriftMs } from '../../lib/core/runtime/lease-drift';
import { VirtualLab } from '../sim/virtual-lab';

const lockName = (key: string): string => new KeySpace('lock:').names(key, 'm').lock;

let lab: VirtualLab;
beforeEach(() => {
  lab = new VirtualLab();
});
afterEach(async () => {
  await lab.close();
});

describe('a fixed lease', () => {
  it.each([
    ['reentrant mutex', {}],
    ['token lock', { reentrant: false }],
  ])('ends the %s in the holder a drift allowance before Redis expires the key', async (_kind, options) => {
    const { engine } = await lab.warmProcess();
    await lab.warm(engine, options);
    const requestedAt = lab.now;
    const handle = await lab.settle(engine.acquire('order:1', { ...options, leaseMs: 1000 }));
    const abort = lab.abortOf(handle.signal);
    // Granted one round trip after the request; the script's PEXPIRE started when it ran, mid-way.
    expect(lab.now - requestedAt).toBeCloseTo(1, 6);
    expect(lab.pttl(lockName('order:1'))).toBe(1000); // 999.5, as Redis rounds a PTTL

    const localEnd = requestedAt + 1000 - leaseDriftMs(1000); // 988 ms: 1 % + 2 ms early
    await lab.until(() => abort.at !== undefined);
    expect(abort.at).toBeCloseTo(localEnd, 6);
    expect(abort.reason).toBeInstanceOf(LockLostError);
    expect(abort.reason).toMatchObject({ reason: 'expired', key: 'order:1' });
    expect(handle.isHeld).toBe(false);
    expect(handle.remainingMs()).toBe(0);
    // Redis still holds it for the rest of the allowance: nobody else can have it yet.
    expect(lab.pttl(lockName('order:1'))).toBe(13); // 12.5
    await lab.advance(12.5);
    expect(lab.pttl(lockName('order:1'))).toBe(-2);
    expect(engine.stats()).toMatchObject({ held: 0, watchdog: 0 });
  });

  it('ends first in a holder whose clock runs 1 % slow against the server (the documented bound)', async () => {
    const { engine } = await lab.warmProcess({}, { offsetMs: 5_000, rate: 0.99 });
    const requestedAt = lab.now;
    const handle = await lab.settle(engine.acquire('order:2', { leaseMs: 6_000 }));
    const abort = lab.abortOf(handle.signal);
    await lab.until(() => abort.at !== undefined);
    // 6 000 − 62 ms of a clock that runs 1 % slow is 6 000 ms of true time: still before Redis' expiry,
    // which started half a millisecond after the request.
    expect(abort.at! - requestedAt).toBeCloseTo((6_000 - leaseDriftMs(6_000)) / 0.99, 6);
    expect(abort.at!).toBeLessThan(requestedAt + 0.5 + 6_000);
    expect(lab.pttl(lockName('order:2'))).toBeGreaterThan(0);
  });

  it('is not renewed by the watchdog', async () => {
    const { engine } = await lab.warmProcess({ watchdogLeaseMs: 300, renewEveryMs: 100 });
    const handle = await lab.settle(engine.acquire('order:3', { leaseMs: 400 }));
    expect(engine.stats().watchdog).toBe(0);
    await lab.advance(1_000);
    expect(handle.signal.aborted).toBe(true);
    expect(lab.runs('renew')).toHaveLength(0);
    expect(lab.pttl(lockName('order:3'))).toBe(-2);
  });

  it('moves its end with extend(), in the holder and in Redis', async () => {
    const { engine } = await lab.warmProcess();
    const handle = await lab.settle(engine.acquire('order:4', { leaseMs: 1_000 }));
    const abort = lab.abortOf(handle.signal);
    await lab.advance(500);
    const extendedAt = lab.now;
    await lab.settle(handle.extend(2_000));
    expect(lab.pttl(lockName('order:4'))).toBe(2_000); // 1 999.5
    await lab.until(() => abort.at !== undefined);
    expect(abort.at).toBeCloseTo(extendedAt + 2_000 - leaseDriftMs(2_000), 6);
    expect(abort.reason).toMatchObject({ reason: 'expired' });
  });
});

describe('the watchdog', () => {
  it.each([
    ['reentrant mutex', {}],
    ['token lock', { reentrant: false }],
  ])('keeps a %s for an hour of leases, renewing on its period', async (_kind, options) => {
    const { engine } = await lab.warmProcess({ watchdogLeaseMs: 900, renewEveryMs: 300 });
    const handle = await lab.settle(engine.acquire('job:1', options));
    const since = lab.now;
    let lowest = Infinity;
    for (let i = 0; i < 4_000; i++) {
      await lab.advance(100);
      lowest = Math.min(lowest, lab.pttl(lockName('job:1')));
    }
    expect(handle.signal.aborted).toBe(false);
    // 400 s of true time at one renewal per 300 ms; the lease never fell below a period's worth.
    const renewals = lab.runs(undefined, since).filter((r) => r.script === 'renew');
    expect(renewals.length).toBeGreaterThanOrEqual(1_333);
    expect(renewals.length).toBeLessThanOrEqual(1_334);
    expect(lowest).toBeGreaterThan(900 - 300 - 2);
    expect(await lab.settle(handle.release())).toBe(true);
    expect(lab.pttl(lockName('job:1'))).toBe(-2);
    expect(engine.stats()).toMatchObject({ held: 0, watchdog: 0 });
  });

  it('tells a holder cut off from Redis at its local lease end, before Redis frees the key for the next', async () => {
    const holder = await lab.warmProcess({ watchdogLeaseMs: 900, renewEveryMs: 300 });
    const other = await lab.warmProcess({ watchdogLeaseMs: 900, renewEveryMs: 300 });
    const handle = await lab.settle(holder.engine.acquire('job:2'));
    const abort = lab.abortOf(handle.signal);
    await lab.advance(1_000);
    const lastRenewal = lab.runs('renew').at(-1)!;
    // The holder's packets to the server are lost from now on (a partition).
    holder.network.partitioned.add(lab.server.name);
    const waiting = other.engine.acquire('job:2', { waitMs: 5_000 });
    let grantedAt: number | undefined;
    void waiting.then(() => (grantedAt = lab.now));
    await lab.until(() => abort.at !== undefined);
    // The lease the last renewal set runs from when its request left (half a packet before it ran).
    const requestLeft = lastRenewal.at - 0.5;
    expect(abort.at).toBeCloseTo(requestLeft + 900 - leaseDriftMs(900), 6);
    expect(abort.reason).toMatchObject({ reason: 'expired' });
    expect(lab.pttl(lockName('job:2'))).toBeGreaterThan(0);
    expect(grantedAt).toBeUndefined();

    const second = await lab.settle(waiting);
    // The other process is granted only once Redis let the key go, with a later fencing token.
    expect(grantedAt!).toBeGreaterThanOrEqual(lastRenewal.at + 900);
    expect(second.fencingToken).toBeGreaterThan(handle.fencingToken);
    expect(await lab.settle(second.release())).toBe(true);
  });

  it.each([
    ['deleted', 'the key was deleted'],
    ['taken-over', 'another owner holds the key'],
  ])('aborts the signal with "%s" at the next renewal after %s', async (reason) => {
    const holder = await lab.warmProcess({ watchdogLeaseMs: 3_000, renewEveryMs: 100 });
    const other = await lab.warmProcess();
    const handle = await lab.settle(holder.engine.acquire('job:3'));
    const grantedAt = lab.now;
    const abort = lab.abortOf(handle.signal);
    await lab.advance(30);
    lab.server.store.del(lockName('job:3'));
    const thief =
      reason === 'taken-over' ? await lab.settle(other.engine.acquire('job:3', { waitMs: 0 })) : null;
    await lab.until(() => abort.at !== undefined);
    // The next renewal (100 ms after the grant) found it gone: told when its reply came.
    expect(abort.at! - grantedAt).toBeLessThanOrEqual(100 + 2 + 1e-6);
    expect(abort.reason).toMatchObject({ reason, key: 'job:3' });
    expect(holder.engine.stats()).toMatchObject({ held: 0, watchdog: 0 });
    expect(await lab.settle(handle.release())).toBe(false);
    if (thief) {
      expect(thief.isHeld).toBe(true);
      expect(await lab.settle(thief.release())).toBe(true);
    }
    expect(lab.pttl(lockName('job:3'))).toBe(-2);
  });
});
