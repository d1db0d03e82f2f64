import calculateSlot from 'cluster-key-slot';
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import type { LockLostError } from '../../lib/core/errors';
import { openLockEngine } from '../../lib/core/topology/create-lock-engine';
import { resolveLockConfig } from '../../lib/core/topology/resolve-lock-config';
import { Prng } from './prng';
import { SimDoor, SimNetwork } from './sim-door';
import { SimServer } from './sim-server';
import { SimProcess, Simulation } from './virtual-time';
import { SIM_ENGINE } from './world';

// A renewal answered out of order (found by the simulator, seed 266 of the slow-clock world): the
// watchdog renews a Cluster's locks in one round that waits for its slowest node, so an extend() sent
// after it can be answered first. Redis ran the round's renewal first and the extend's shorter lease
// stands there; the round's late answer must not move the holder's lease end past it.

/** A key of the Redis Cluster door's slot range `node` (of three), for keys named `${stem}N`. */
function keyOn(node: number, stem: string): string {
  for (let i = 0; ; i++) {
    const key = `${stem}${i}`;
    // The door routes by the slot of the lock key's hash tag: the user key.
    if (Math.floor((calculateSlot(key) * 3) / 16384) === node) return key;
  }
}

describe('a watchdog round answered after a later extend()', () => {
  it('keeps the shorter lease of the extend(): the holder is told before Redis lets the key go', async () => {
    const sim = new Simulation(new Prng(43));
    const servers = [0, 1, 2].map((i) => new SimServer(`redis${i}`, sim, new Prng(i + 1), 0));
    const proc = new SimProcess('p0', sim, { offsetMs: 1000, rate: 1 }, new Prng(7));
    const network = new SimNetwork(new Prng(8));
    const engine = openLockEngine(resolveLockConfig({ redis: 'redis://sim/0', ...SIM_ENGINE, app: 'p0' }), {
      runtime: proc.runtime,
      openDoor: () => new SimDoor(proc, servers, network, true, true),
    });
    const shortKey = keyOn(1, 'short-');
    const slowKey = keyOn(2, 'slow-');
    const [fast, slow] = [servers[1]!, servers[2]!];

    let held: LockHandle | undefined;
    let other: LockHandle | undefined;
    sim.at(0, () => {
      void engine.acquire(shortKey).then((h) => (held = h));
      void engine.acquire(slowKey).then((h) => (other = h));
    });
    // The watchdog's rounds run every 300 ms from the first grant (at about 1 ms).
    await sim.run(280);
    expect(held && other).toBeTruthy();

    // The slow node stalls the next round (within the command timeout, so the round succeeds).
    slow.pause(SIM_ENGINE.commandTimeoutMs - 10);
    const renewalsBefore = fast.runs.filter((r) => r.script === 'renew').length;
    while (fast.runs.filter((r) => r.script === 'renew').length === renewalsBefore) {
      await sim.run(sim.now + 0.5);
    }
    // The round's renewal of `held` ran on the fast node; its answer waits for the slow one. Now a
    // shorter lease than the round's (900 ms), answered at once, outlasting the round's late answer
    // and ending in Redis before the round after.
    const roundAt = sim.now;
    let extended = false;
    sim.at(roundAt, () => void held!.extend(260).then(() => (extended = true)));
    await sim.run(roundAt + 5);
    expect(extended).toBe(true);
    const lockKey = fast.runs.find((r) => r.script === 'renew')!.keys[0]!;

    // The round answers (the pause ends at 520 ms); past Redis' end of the extended lease, before the
    // next round (at about 600 ms), the key is gone there: the holder must have been told.
    await sim.run(roundAt + 275);
    expect(sim.now).toBeLessThan(595);
    expect(fast.store.exists(lockKey)).toBe(false);
    expect(held!.signal.aborted).toBe(true);
    expect((held!.signal.reason as LockLostError).reason).toBe('expired');
    expect(other!.signal.aborted).toBe(false);

    const closing = engine.close();
    await sim.run(sim.now + 1000);
    await closing;
  });
});
