import type { LockLostError } from '../../lib/core/errors';
import { InspectionKeys } from '../../lib/core/inspection/inspection-keys';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { openLockEngine } from '../../lib/core/topology/create-lock-engine';
import { resolveLockConfig } from '../../lib/core/topology/resolve-lock-config';
import { Prng } from './prng';
import { SimDoor, SimNetwork } from './sim-door';
import { SimServer } from './sim-server';
import { SimProcess, Simulation } from './virtual-time';
import { SIM_ENGINE } from './world';

// A force release that runs right after a grant, before the grant's reply is back (found by the
// simulator on RedLock, whose force release runs node by node while attempts run): its notice, on the
// subscriber connection, can overtake that reply. The holder must still be told.

/** A network whose next packet takes the time it is told to (then as usual). */
class ScriptedNetwork extends SimNetwork {
  next?: number;

  override delay(): number {
    const ms = this.next;
    this.next = undefined;
    return ms ?? super.delay();
  }
}

describe('a force-release notice that overtakes the grant it evicts', () => {
  it('tells the holder as its grant arrives: the signal aborts with force-released', async () => {
    const sim = new Simulation(new Prng(11));
    const server = new SimServer('redis0', sim, new Prng(12), 0);
    const proc = new SimProcess('p0', sim, { offsetMs: 500, rate: 1 }, new Prng(13));
    const network = new ScriptedNetwork(new Prng(14));
    const engine = openLockEngine(resolveLockConfig({ redis: 'redis://sim/0', ...SIM_ENGINE, app: 'p0' }), {
      runtime: proc.runtime,
      openDoor: () => new SimDoor(proc, [server], network, false, false),
    });
    // A first call, answered: the engine then listens for its notices.
    sim.at(0, () => void engine.acquire('warm-up').then((h) => h.release()));
    await sim.run(50);

    const key = 'job';
    const names = new KeySpace(engine.options.keyPrefix).names(key);
    let evicted = false;
    server.hook = (s, script, keys, args) => {
      const reply = s.runPort(script, keys, args);
      if (script !== 'mutex-acquire' || keys[0] !== names.lock || evicted) return reply;
      evicted = true;
      // The operator's force release runs right after the grant; its notice leaves at once, the
      // grant's reply takes 5 ms.
      const notice = new InspectionKeys(engine.options.keyPrefix).notice('');
      const forced = s.runPort(
        'force-release',
        [names.lock, names.aux, names.fence],
        ['m', names.channel, 'PUBLISH', '86400000', 'mutex', notice, key, 'stuck', 'operator'],
      );
      expect(forced).toEqual(expect.arrayContaining([1, 'mutex']));
      network.next = 5;
      return reply;
    };
    let granted: Awaited<ReturnType<typeof engine.acquire>> | undefined;
    sim.at(sim.now, () => void engine.acquire(key).then((h) => (granted = h)));
    await sim.run(sim.now + 20);

    expect(evicted).toBe(true);
    expect(granted).toBeDefined();
    expect(granted!.signal.aborted).toBe(true);
    expect((granted!.signal.reason as LockLostError).reason).toBe('force-released');
    let released: boolean | undefined;
    sim.at(sim.now, () => void granted!.release().then((r) => (released = r)));
    await sim.run(sim.now + 20);
    expect(released).toBe(false);

    const closing = engine.close();
    await sim.run(sim.now + 1000);
    await closing;
  });
});
