import type { LockEngine } from '../../lib/core/engine/lock-engine';
import type { LockEngineOptions, LockOptions } from '../../lib/core/options/lock-options';
import { openLockEngine } from '../../lib/core/topology/create-lock-engine';
import type { LockEnvironment } from '../../lib/core/topology/lock-environment';
import { resolveLockConfig } from '../../lib/core/topology/resolve-lock-config';
import { Prng } from './prng';
import { SimDoor, SimNetwork } from './sim-door';
import { SimServer, type ScriptRun } from './sim-server';
import { SimProcess, Simulation, settle, type ClockModel } from './virtual-time';

/** A network whose every packet takes the same time: a spec's timings come out exact. */
class SteadyNetwork extends SimNetwork {
  constructor(
    prng: Prng,
    private readonly oneWayMs: number,
  ) {
    super(prng);
  }

  override delay(): number {
    return this.oneWayMs + (this.jitterMs > 0 ? this.prng.next() * this.jitterMs : 0);
  }
}

/** One process of a lab: its clock and pauses, its network, and the real engine on them. */
export interface LabProcess {
  readonly process: SimProcess;
  readonly network: SimNetwork;
  readonly engine: LockEngine;
}

/** How a lab is built: its seed, and each packet's one-way time. */
export interface LabOptions {
  readonly seed?: number;
  /** Each packet's transit time, each way (ms of true time). Default 0.5. */
  readonly oneWayMs?: number;
  /** Independent servers: 1 (default), or RedLock's (every process then locks on all of them). */
  readonly servers?: number;
}

/**
 * The simulator's parts, small, for specs of the engine's own timing logic (test/virtual-time/): one
 * simulated Redis, processes each running a real LockEngine on a virtual-time runtime, and a network
 * whose packets all take `oneWayMs`. A spec starts calls, moves virtual time on (`advance`, `settle`)
 * and reads the server's keys and the scripts it ran: leases, renewals, backoff, deadlines and
 * wake-ups come out to the millisecond, and hours of leases take milliseconds of CPU.
 */
export class VirtualLab {
  readonly sim: Simulation;
  /** The first server (the only one unless RedLock's). */
  readonly server: SimServer;
  readonly servers: SimServer[] = [];
  private readonly prng: Prng;
  private readonly oneWayMs: number;
  private readonly engines: LockEngine[] = [];
  private count = 0;

  constructor(options: LabOptions = {}) {
    this.prng = new Prng(options.seed ?? 1);
    this.oneWayMs = options.oneWayMs ?? 0.5;
    this.sim = new Simulation(this.prng.fork());
    for (let i = 0; i < (options.servers ?? 1); i++) {
      const server = new SimServer(`redis${i}`, this.sim, this.prng.fork(), 0);
      // A server clock that agrees with true time: the spec reads expiries in true time.
      server.clockOffsetMs = 0;
      this.servers.push(server);
    }
    this.server = this.servers[0]!;
  }

  /** True time (ms since the lab started). */
  get now(): number {
    return this.sim.now;
  }

  /**
   * A process with its engine (options as `DistributedLockModule.forRoot()` takes them). Its clock
   * runs with `clock` against true time: by default from 0, at true rate.
   */
  process(engine: LockEngineOptions = {}, clock: ClockModel = { offsetMs: 0, rate: 1 }): LabProcess {
    const name = `p${this.count++}`;
    const process = new SimProcess(name, this.sim, clock, this.prng.fork());
    const network = new SteadyNetwork(this.prng.fork(), this.oneWayMs);
    const env: LockEnvironment = {
      runtime: process.runtime,
      // redis://sim/<i>: server i.
      openDoor: (option) =>
        new SimDoor(process, [this.servers[Number(String(option).slice(-1))]!], network, false, false),
    };
    const where =
      this.servers.length > 1
        ? { redlock: this.servers.map((_, i) => `redis://sim/${i}`) }
        : { redis: 'redis://sim/0' };
    const opened = openLockEngine(
      resolveLockConfig({ inspection: false, app: name, ...engine, ...where }),
      env,
    );
    this.engines.push(opened);
    return { process, network, engine: opened };
  }

  /**
   * A process whose engine has already been granted and released one lock: its connection made, its
   * scripts loaded and its wake-up subscriber open, so the next call's timings are those of a warm
   * engine (a first call also loads its script and subscribes).
   */
  async warmProcess(engine: LockEngineOptions = {}, clock?: ClockModel): Promise<LabProcess> {
    const made = this.process(engine, clock);
    await this.warm(made.engine);
    return made;
  }

  /** Acquires and releases a lock of `options`' kind once: its scripts are loaded after. */
  async warm(engine: LockEngine, options: LockOptions = {}): Promise<void> {
    const handle = await this.settle(engine.acquire('lab:warm-up', { ...options, leaseMs: 1_000 }));
    await this.settle(handle.release());
  }

  /** Runs every event due within the next `ms` of true time. */
  async advance(ms: number): Promise<void> {
    await this.run(this.sim.now + ms);
  }

  /**
   * Runs the simulation until `work` settles and returns its outcome (its rejection is thrown), failing
   * when it has not settled within `limitMs` of true time.
   */
  async settle<T>(work: Promise<T>, limitMs = 600_000): Promise<T> {
    let done = false;
    const outcome = work.then(
      (value) => ((done = true), { value }),
      (error: unknown) => ((done = true), { error }),
    );
    await this.run(this.sim.now + limitMs, () => done);
    if (!done) throw new Error(`not settled within ${limitMs} ms of virtual time`);
    const result = await outcome;
    if ('error' in result) throw result.error;
    return result.value;
  }

  /**
   * Runs the simulation until `predicate` holds after an event, failing when it does not within
   * `limitMs` of true time; returns the true time it held at. Only events move time here: for a state
   * that time alone changes (a key's expiry), `advance()` to either side of it.
   */
  async until(predicate: () => boolean, limitMs = 600_000): Promise<number> {
    if (predicate()) return this.sim.now;
    await this.run(this.sim.now + limitMs, predicate);
    if (!predicate()) throw new Error(`condition not met within ${limitMs} ms of virtual time`);
    return this.sim.now;
  }

  /** Records when (true time) and how `work` settles, as the simulation runs. */
  watch<T>(work: Promise<T>): { at?: number; value?: T; error?: unknown } {
    const seen: { at?: number; value?: T; error?: unknown } = {};
    work.then(
      (value) => Object.assign(seen, { at: this.now, value }),
      (error: unknown) => Object.assign(seen, { at: this.now, error }),
    );
    return seen;
  }

  /** Records when (true time) `signal` aborts, and its reason. */
  abortOf(signal: AbortSignal): { at?: number; reason?: unknown } {
    const seen: { at?: number; reason?: unknown } = {};
    signal.addEventListener('abort', () => Object.assign(seen, { at: this.now, reason: signal.reason }), {
      once: true,
    });
    return seen;
  }

  /** Runs the simulation; what the spec started before (its promise chains) queues its events first. */
  private async run(until: number, stop?: () => boolean): Promise<void> {
    await settle();
    if (!stop?.()) await this.sim.run(until, stop);
  }

  /** The scripts the servers ran named `script` (all when omitted), in order, from true time `since`. */
  runs(script?: string, since = 0): ScriptRun[] {
    return this.servers
      .flatMap((server) => server.runs)
      .filter((r) => (script === undefined || r.script === script) && r.at >= since)
      .sort((a, b) => a.at - b.at);
  }

  /** The server's PTTL of `key` as Redis answers it (-2: no key, -1: no expiry). */
  pttl(key: string): number {
    return this.server.store.pttl(key);
  }

  /** Closes every engine (its timers are events: the close runs them out). */
  async close(): Promise<void> {
    await this.settle(Promise.all(this.engines.splice(0).map((e) => e.close())));
  }
}
