import { MemoryStore } from '../../lib/testing/memory/memory-store';
import { SCRIPT_PORTS } from '../../lib/testing/memory/memory-scripts';
import { toRedisReply, type ScriptPort } from '../../lib/testing/memory/scripts/lua';
import { fenceFloor } from './fence-floor-port';
import { auditAppend, forceRelease, registryRead } from './force-release-port';
import type { Prng } from './prng';
import { SIM_EPOCH_MS, type Simulation } from './virtual-time';

/** A script the simulated servers run beyond the in-memory backend's ports. */
const EXTRA_PORTS: Readonly<Record<string, ScriptPort>> = {
  'fence-floor': fenceFloor,
  'force-release': forceRelease,
  'registry-read': registryRead,
  'audit-append': auditAppend,
};

/** A Redis error as the server answers it (the reply text starts with its code). */
export class ServerError extends Error {}

/** A server's answer to one script: what the history records of each grant and release. */
export interface ScriptRun {
  readonly server: string;
  readonly script: string;
  readonly keys: readonly string[];
  readonly args: readonly string[];
  readonly reply: unknown;
  /** True time it ran at. */
  readonly at: number;
}

/** What a test may change about how a server runs scripts: the planted bugs (plants.ts) use it. */
export type ScriptHook = (server: SimServer, name: string, keys: string[], args: string[]) => unknown;

/**
 * One simulated Redis: a MemoryStore (the in-memory backend's keyspace, running the TypeScript ports of
 * the library's Lua scripts) with a clock of its own (true time plus an offset), a script cache, pub/sub
 * to the connections subscribed on it, and its faults: down (killed; restarted with or without its
 * data, as AOF or no persistence), paused (CLIENT PAUSE: commands wait), and a replica that lags, which
 * a failover promotes in its place.
 */
export class SimServer {
  store: MemoryStore;
  /** Bumped at every restart and failover: connections of an older epoch are gone. */
  epoch = 0;
  up = true;
  /** CLIENT PAUSE: commands that arrive meanwhile wait, in order, for its end. */
  paused = false;
  private readonly waitingForPause: (() => void)[] = [];
  /** Server clock = true time + this (ms). A failover moves it to the replica's. */
  clockOffsetMs: number;
  private readonly scripts = new Set<string>();
  private readonly subscribers = new Set<(channel: string, message: string) => void>();
  private replicaCopy?: MemoryStore;
  private replicaClockOffsetMs: number;
  /** Every script run, in order (the checker's view of what Redis did); only those `keeps` accepts. */
  readonly runs: ScriptRun[] = [];
  /**
   * Which scripts' runs to keep (all when unset). A world that is not traced keeps only those the
   * checker reads: the others, kept until the check, were most of what each scavenge had to copy.
   */
  keeps?: (script: string, reply: unknown) => boolean;
  hook?: ScriptHook;
  private readonly resets: (() => void)[] = [];

  constructor(
    readonly name: string,
    private readonly sim: Simulation,
    prng: Prng,
    /** Replication lag: the replica copies the master this often (ms of true time). */
    readonly replicaSyncMs: number,
  ) {
    this.clockOffsetMs = prng.range(-20, 20);
    this.replicaClockOffsetMs = prng.range(-20, 20);
    this.store = this.newStore();
    if (replicaSyncMs > 0) this.syncReplica();
  }

  private newStore(): MemoryStore {
    const store = new MemoryStore({
      now: () => this.sim.now + this.clockOffsetMs,
      wallNow: () => SIM_EPOCH_MS + this.sim.now + this.clockOffsetMs,
    });
    store.onPublish((channel, message) => {
      for (const deliver of [...this.subscribers]) deliver(channel, message);
    });
    return store;
  }

  /** The replica takes a copy of the master, and again after `replicaSyncMs`: its lag. */
  private syncReplica(): void {
    if (this.up) {
      this.replicaCopy = this.store.copy({
        now: () => this.sim.now + this.replicaClockOffsetMs,
        wallNow: () => SIM_EPOCH_MS + this.sim.now + this.replicaClockOffsetMs,
      });
    }
    this.sim.after(this.replicaSyncMs, () => this.syncReplica());
  }

  /** Runs a script as EVALSHA (`source` undefined) or EVAL; throws a ServerError as Redis answers one. */
  runScript(name: string, sha: string, source: string | undefined, keys: string[], args: string[]): unknown {
    if (source !== undefined) this.scripts.add(sha);
    else if (!this.scripts.has(sha)) throw new ServerError('NOSCRIPT No matching script. Please use EVAL.');
    if (name === 'acl-check') return []; // the simulated user may run everything
    const reply = this.hook ? this.hook(this, name, keys, args) : this.runPort(name, keys, args);
    if (this.keeps === undefined || this.keeps(name, reply))
      this.runs.push({ server: this.name, script: name, keys, args, reply, at: this.sim.now });
    return reply;
  }

  /** The port of `name` over this server's store, atomically, as Redis runs a script. */
  runPort(name: string, keys: string[], args: string[]): unknown {
    const port = SCRIPT_PORTS[name] ?? EXTRA_PORTS[name];
    if (!port) throw new ServerError(`ERR the simulated server has no port of ${name}.lua`);
    try {
      return toRedisReply(this.store.atomically(() => port(this.store, ['', ...keys], ['', ...args])));
    } catch (err) {
      throw new ServerError(err instanceof Error ? err.message : String(err));
    }
  }

  command(args: readonly (string | number)[]): unknown {
    const name = String(args[0]).toUpperCase();
    if (name === 'PING') return 'PONG';
    if (name === 'INFO') return '# Server\r\nredis_version:7.0.15\r\n';
    throw new ServerError(`ERR unknown command '${name}' in the simulation`);
  }

  /** CLIENT PAUSE for `ms`: commands wait, then run in the order they came. */
  pause(ms: number): void {
    if (this.paused) return;
    this.paused = true;
    this.pauseEnd = this.sim.after(ms, () => this.unpause());
  }

  private pauseEnd?: { cancel(): void };

  private unpause(): void {
    this.paused = false;
    this.pauseEnd?.cancel();
    this.pauseEnd = undefined;
    for (const run of this.waitingForPause.splice(0)) run();
  }

  /** @internal Runs `run` when the pause ends. */
  afterPause(run: () => void): void {
    this.waitingForPause.push(run);
  }

  /** Calls `listener` whenever the server drops its connections (kill, restart, failover). */
  onReset(listener: () => void): void {
    this.resets.push(listener);
  }

  private reset(): void {
    this.epoch++;
    this.subscribers.clear();
    for (const listener of this.resets) listener();
  }

  subscribe(deliver: (channel: string, message: string) => void): () => void {
    this.subscribers.add(deliver);
    return () => this.subscribers.delete(deliver);
  }

  /** kill -9: every connection drops; nothing answers until restart(). */
  kill(): void {
    this.up = false;
    // A pause dies with the process: what waited in it fails with its connection, and a restart
    // is not paused.
    if (this.paused) this.unpause();
    this.reset();
  }

  /** Starts again: with its data (AOF, fsync always) or empty (no persistence). Its script cache is empty. */
  restart(persistence: 'aof' | 'none'): void {
    if (persistence === 'none') this.store = this.newStore();
    this.scripts.clear();
    this.up = true;
    this.reset();
  }

  /**
   * The replica becomes the master (Sentinel's promotion): its data is the last copy it took (up to
   * `replicaSyncMs` old), its clock its own. Connections of the old master drop.
   */
  failover(): void {
    const copy = this.replicaCopy ?? this.newStore();
    [this.clockOffsetMs, this.replicaClockOffsetMs] = [this.replicaClockOffsetMs, this.clockOffsetMs];
    this.store = copy.copy({
      now: () => this.sim.now + this.clockOffsetMs,
      wallNow: () => SIM_EPOCH_MS + this.sim.now + this.clockOffsetMs,
    });
    this.store.onPublish((channel, message) => {
      for (const deliver of [...this.subscribers]) deliver(channel, message);
    });
    this.scripts.clear();
    this.up = true;
    this.reset();
  }
}
