import { LockNotAcquiredError } from '../../lib/core/errors';
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import type { MultiLockHandle } from '../../lib/core/multi/multi-lock-handle';
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
// subscriber connection, can overtake that reply. The caller must never be handed that lost grant as
// held: the call gives it back and goes on as if the lock had been busy (simulator seed 1076: a RedLock
// grant handed out lost carried a token above the next holder's), or times out when no wait is left.

/** A network whose next packet takes the time it is told to (then as usual). */
class ScriptedNetwork extends SimNetwork {
  next?: number;

  override delay(): number {
    const ms = this.next;
    this.next = undefined;
    return ms ?? super.delay();
  }
}

/** One engine on one server, warmed up, whose first grant of `key` an operator force-releases before its reply is back. */
async function overtaken(key: string, script = 'mutex-acquire') {
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

  const names = new KeySpace(engine.options.keyPrefix).names(key);
  const forced: { fence?: number } = {};
  server.hook = (s, name, keys, args) => {
    const reply = s.runPort(name, keys, args);
    if (name !== script || keys[0] !== names.lock || forced.fence !== undefined) return reply;
    // The operator's force release runs right after the grant; its notice leaves at once, the
    // grant's reply takes 5 ms.
    const notice = new InspectionKeys(engine.options.keyPrefix).notice('');
    const answer = s.runPort(
      'force-release',
      [names.lock, names.aux, names.fence],
      ['m', names.channel, 'PUBLISH', '86400000', 'mutex', notice, key, 'stuck', 'operator'],
    ) as unknown[];
    expect(answer).toEqual(expect.arrayContaining([1, 'mutex']));
    forced.fence = Number(answer[1]);
    network.next = 5;
    return reply;
  };
  const close = async (): Promise<void> => {
    const closing = engine.close();
    await sim.run(sim.now + 1000);
    await closing;
  };
  return { sim, server, engine, names, forced, close };
}

describe('a force-release notice that overtakes the grant it evicts', () => {
  it('does not hand the lost grant out: the call gives it back and is granted again, above the fence', async () => {
    const { sim, server, engine, names, forced, close } = await overtaken('job');
    const since = sim.now;
    let granted: LockHandle | undefined;
    sim.at(sim.now, () => void engine.acquire('job', { waitMs: 1_000 }).then((h) => (granted = h)));
    await sim.run(sim.now + 50);

    expect(forced.fence).toBeDefined();
    expect(granted).toBeDefined();
    expect(granted!.signal.aborted).toBe(false);
    expect(granted!.isHeld).toBe(true);
    // The fence the force release advanced is below the token of the grant the caller holds.
    expect(granted!.fencingToken).toBeGreaterThan(forced.fence!);
    // Two grants in Redis: the first, force-released before its answer came, given back; the second, held.
    const acquires = server.runs.filter((r) => r.script === 'mutex-acquire' && r.keys[0] === names.lock);
    expect(acquires.filter((r) => r.at >= since).map((r) => (r.reply as number[])[0])).toEqual([1, 1]);
    expect(server.store.exists(names.lock)).toBe(true);
    let released: boolean | undefined;
    sim.at(sim.now, () => void granted!.release().then((r) => (released = r)));
    await sim.run(sim.now + 20);
    expect(released).toBe(true);
    await close();
  });

  it('does not hand out a multi-key grant one of whose keys was force-released before its answer came', async () => {
    const { sim, server, engine, forced, close } = await overtaken('job', 'multi-acquire');
    const since = sim.now;
    let granted: MultiLockHandle | undefined;
    sim.at(
      sim.now,
      () => void engine.acquire(['job', 'other'], { waitMs: 1_000 }).then((h) => (granted = h)),
    );
    await sim.run(sim.now + 50);

    expect(forced.fence).toBeDefined();
    expect(granted).toBeDefined();
    expect(granted!.signal.aborted).toBe(false);
    expect(granted!.isHeld).toBe(true);
    expect(granted!.fencingTokens.job).toBeGreaterThan(forced.fence!);
    // The first round was given back, the second holds both keys.
    const rounds = server.runs.filter((r) => r.script === 'multi-acquire' && r.at >= since);
    expect(rounds.map((r) => (r.reply as number[])[0])).toEqual([1, 1]);
    let released: boolean | undefined;
    sim.at(sim.now, () => void granted!.release().then((r) => (released = r)));
    await sim.run(sim.now + 20);
    expect(released).toBe(true);
    await close();
  });

  it('times out with waitMs 0, saying why, and holds nothing', async () => {
    const { sim, server, engine, names, close } = await overtaken('job');
    let outcome: unknown;
    sim.at(
      sim.now,
      () =>
        void engine.acquire('job', { waitMs: 0 }).then(
          (h) => (outcome = h),
          (e: unknown) => (outcome = e),
        ),
    );
    await sim.run(sim.now + 50);

    expect(outcome).toBeInstanceOf(LockNotAcquiredError);
    expect((outcome as Error).message).toMatch(/force-released before its answer came/);
    expect(engine.stats()).toMatchObject({ held: 0 });
    expect(server.store.exists(names.lock)).toBe(false);
    await close();
  });
});
