import calculateSlot from 'cluster-key-slot';
import type { RedisArgs, RedisDoor, ScriptSend, WakeupSubscriber } from '../../lib/core/redis/redis-door';
import type { LuaScript, ScriptArg } from '../../lib/core/redis/script-library';
import type { Prng } from './prng';
import { ServerError, type SimServer } from './sim-server';
import type { SimProcess } from './virtual-time';

/**
 * The simulated network between one process and its servers, and what it does to packets right now.
 * Each fault is a window of true time set by the fault plan (faults.ts); outside every window a packet
 * takes 0.1–1 ms each way and arrives.
 */
export class SimNetwork {
  /** Probability a request is lost on the way (never runs). */
  dropRequest = 0;
  /** Probability a script ran but its reply is lost. */
  dropReply = 0;
  /** Extra delay drawn up to this many ms per packet (spikes and reordering). */
  jitterMs = 0;
  /** Probability a pub/sub message is lost; the others are delayed like any packet. */
  dropMessage = 0;
  /** Every packet to or from these servers is lost (a partition), until cleared. */
  readonly partitioned = new Set<string>();
  /**
   * A partition as TCP lives through one shorter than its timeouts: every packet to or from these
   * servers is held (retransmitted) until the true time given, then arrives in order. A request sent
   * during it runs late, its reply comes later still, and the connection stays up throughout.
   */
  readonly heldUntil = new Map<string, number>();

  constructor(readonly prng: Prng) {}

  /** One packet's transit time in ms. */
  delay(): number {
    return this.prng.range(0.1, 1) + (this.jitterMs > 0 ? this.prng.next() * this.jitterMs : 0);
  }

  /** When a packet sent to or from `server` at `now` arrives: after a held partition heals, if one holds it. */
  arrival(server: string, now: number): number {
    const held = this.heldUntil.get(server);
    return (held !== undefined && held > now ? held : now) + this.delay();
  }

  /** No new connection to `server` can be made now (a partition of either kind). */
  cutOff(server: string, now: number): boolean {
    return this.partitioned.has(server) || (this.heldUntil.get(server) ?? 0) > now;
  }
}

/** What a door records of the events it saw (the trace prints them). */
export type DoorNote = (text: string) => void;

/**
 * A RedisDoor onto simulated servers, as one client library would be: one connection per server, an
 * offline queue while it is down (commands wait for the reconnect, as ioredis' do), reconnects every
 * 50–150 ms, `up`/`down` for the engine's connection watch, and a subscriber connection of its own.
 * A Cluster door routes each script by its first key's slot over several servers (one per slot range).
 */
export class SimDoor implements RedisDoor {
  readonly family = 'ioredis' as const;
  readonly owned = true;
  readonly ready = true;
  readonly label: string;
  readonly ridesOutFailover: boolean;
  private readonly listeners: ((state: 'up' | 'down', reason?: string) => void)[] = [];
  /** @internal One link per server (a Cluster: per master). */
  readonly links: ServerLink[];
  private closed = false;

  constructor(
    readonly process: SimProcess,
    servers: readonly SimServer[],
    readonly network: SimNetwork,
    readonly cluster: boolean,
    /** Sentinel or Cluster: the engine retries failover errors until the deadline. */
    ridesOutFailover: boolean,
  ) {
    this.label = cluster ? 'Redis Cluster' : 'Redis';
    this.ridesOutFailover = ridesOutFailover;
    this.links = servers.map((server) => new ServerLink(this, server));
  }

  script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    send: ScriptSend,
  ): Promise<unknown> {
    const link = this.route(keys[0]);
    const strings = args.map(String);
    const keyList = [...keys];
    return link.send((server) =>
      server.runScript(script.name, script.sha, send.reload ? script.source : undefined, keyList, strings),
    );
  }

  command(args: RedisArgs, routeKey?: string): Promise<unknown> {
    return this.route(routeKey).send((server) => server.command(args));
  }

  transaction(): Promise<unknown[]> {
    return Promise.reject(new Error('ERR the simulation runs with inspection off: no MULTI/EXEC'));
  }

  subscriber(): WakeupSubscriber {
    return new SimSubscriber(this, this.links);
  }

  watch(listener: (state: 'up' | 'down', reason?: string) => void): void {
    this.listeners.push(listener);
  }

  fatalError(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const link of this.links) link.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** @internal A link went down or came back. */
  changed(state: 'up' | 'down', reason?: string): void {
    for (const listener of this.listeners) listener(state, reason);
  }

  private route(key: string | undefined): ServerLink {
    if (!this.cluster || key === undefined || this.links.length === 1) return this.links[0]!;
    return this.links[Math.floor((calculateSlot(key) * this.links.length) / 16384)]!;
  }

  /** @internal The link of the server owning `channel` (sharded pub/sub on a Cluster). */
  linkFor(channel: string): ServerLink {
    return this.route(channel);
  }
}

/** One connection of a door to one server: its epoch, its offline queue, its reconnects. */
class ServerLink {
  /** The server epoch this connection was made in; undefined while disconnected. */
  private epoch?: number;
  private readonly offline: (() => void)[] = [];
  /** TCP keeps a connection's order: a packet never arrives before one sent earlier on it. */
  private lastRequestAt = 0;
  private lastReplyAt = 0;
  private reconnecting = false;
  private closed = false;

  constructor(
    private readonly door: SimDoor,
    readonly server: SimServer,
  ) {
    this.epoch = server.up ? server.epoch : undefined;
    // A killed server resets its sockets: the client sees the connection close within a packet's time.
    server.onReset(() => door.process.sim.after(door.network.delay(), () => this.poke(), door.process));
  }

  private get sim() {
    return this.door.process.sim;
  }

  /** Connected now: the server is up and has not restarted since the connection was made. */
  connected(): boolean {
    if (this.epoch !== undefined && this.server.up && this.server.epoch === this.epoch) return true;
    if (this.epoch !== undefined) {
      this.epoch = undefined;
      this.door.changed('down', 'Connection is closed.');
    }
    this.reconnect();
    return false;
  }

  /** Sends one request; resolves with the server's answer, rejects with its error. */
  send(run: (server: SimServer) => unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const go = () => this.transmit(run, resolve, reject);
      if (this.closed) reject(new Error('Connection is closed.'));
      else if (this.connected()) go();
      else this.offline.push(go);
    });
  }

  private transmit(
    run: (server: SimServer) => unknown,
    resolve: (v: unknown) => void,
    reject: (e: unknown) => void,
  ): void {
    const { network } = this.door;
    const sentIn = this.epoch;
    if (network.partitioned.has(this.server.name) || network.prng.chance(network.dropRequest)) return;
    this.lastRequestAt = inOrder(network.arrival(this.server.name, this.sim.now), this.lastRequestAt);
    this.sim.at(this.lastRequestAt, () => this.arrive(run, resolve, reject, sentIn));
  }

  private arrive(
    run: (server: SimServer) => unknown,
    resolve: (v: unknown) => void,
    reject: (e: unknown) => void,
    sentIn: number | undefined,
  ): void {
    const server = this.server;
    if (!server.up || server.epoch !== sentIn) {
      // The connection it went out on is gone: the client fails what was in flight.
      this.answer(() => reject(new Error('Connection is closed.')));
      return;
    }
    if (server.paused) {
      // CLIENT PAUSE: the command waits in the server, in arrival order, until the pause ends.
      server.afterPause(() => this.arrive(run, resolve, reject, sentIn));
      return;
    }
    let reply: unknown;
    let failed: unknown;
    try {
      reply = run(server);
    } catch (err) {
      failed = err instanceof ServerError ? err : new Error(String(err));
    }
    const { network } = this.door;
    if (network.partitioned.has(server.name) || network.prng.chance(network.dropReply)) return;
    this.answer(() => (failed === undefined ? resolve(reply) : reject(failed)));
  }

  /** Delivers an answer to the process after a transit time (in the process: deferred while it is paused). */
  private answer(deliver: () => void): void {
    this.lastReplyAt = inOrder(this.door.network.arrival(this.server.name, this.sim.now), this.lastReplyAt);
    this.sim.at(this.lastReplyAt, deliver, this.door.process);
  }

  private reconnect(): void {
    if (this.reconnecting || this.closed) return;
    this.reconnecting = true;
    const attempt = () => {
      if (this.closed) return;
      if (this.server.up && !this.door.network.cutOff(this.server.name, this.sim.now)) {
        this.reconnecting = false;
        this.epoch = this.server.epoch;
        this.door.changed('up');
        for (const go of this.offline.splice(0)) go();
        this.onUp?.();
        return;
      }
      this.sim.after(this.door.network.prng.range(50, 150), attempt, this.door.process);
    };
    this.sim.after(this.door.network.prng.range(50, 150), attempt, this.door.process);
  }

  /** Checks the connection now (the server reset it). */
  poke(): void {
    if (!this.closed) this.connected();
  }

  onUp?: () => void;

  close(): void {
    this.closed = true;
  }
}

/**
 * The subscriber connection of a door: SUBSCRIBE per server (on a Cluster, a shard channel on its
 * slot's master, a plain one on a master that is up), messages delivered through the network (delayed,
 * dropped, reordered by their delays), and a reconnect that restores its subscriptions as ioredis'
 * autoResubscribe does. Messages published while it is down are lost.
 */
class SimSubscriber implements WakeupSubscriber {
  private readonly channels = new Set<string>();
  private readonly listeners: ((channel: string, message: string) => void)[] = [];
  private readonly stops: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly door: SimDoor,
    links: readonly ServerLink[],
  ) {
    for (const link of links) this.attach(link);
  }

  private attach(link: ServerLink): void {
    const { network, process } = this.door;
    const server = link.server;
    let epoch = server.up ? server.epoch : -1;
    let lastAt = 0;
    const listen = () => {
      epoch = server.epoch;
      this.stops.push(
        server.subscribe((channel, message) => {
          if (this.closed || server.epoch !== epoch || !this.channels.has(channel)) return;
          if (network.partitioned.has(server.name) || network.prng.chance(network.dropMessage)) return;
          lastAt = inOrder(network.arrival(server.name, process.sim.now), lastAt);
          process.sim.at(
            lastAt,
            () => {
              if (this.closed || !this.channels.has(channel)) return;
              for (const listener of this.listeners) listener(channel, message);
            },
            process,
          );
        }),
      );
    };
    if (server.up) listen();
    // The subscriber reconnects with the command connection and restores its subscriptions.
    const previous = link.onUp;
    link.onUp = () => {
      previous?.();
      listen();
    };
  }

  // The server delivers from the moment SUBSCRIBE reaches it, and stops when UNSUBSCRIBE does.
  async subscribe(channel: string, sharded = true): Promise<void> {
    await this.linkFor(channel, sharded).send(() => this.channels.add(channel));
  }

  async unsubscribe(channel: string, sharded = true): Promise<void> {
    await this.linkFor(channel, sharded).send(() => this.channels.delete(channel));
  }

  /**
   * A shard channel goes to the master that owns its slot. A plain channel (the force-release notices)
   * has no owner: every Cluster node delivers a PUBLISH, and ioredis keeps its one subscriber
   * connection on a node that is up (it moves to another when its node goes away), so a plain
   * SUBSCRIBE waits for no particular node (seed 5530: a notice SUBSCRIBE queued 780 ms for a killed
   * master while another node delivered the force release's PUBLISH). The slot owner while it is up,
   * as before; else the first node that is.
   */
  private linkFor(channel: string, sharded: boolean): ServerLink {
    const owner = this.door.linkFor(channel);
    if (sharded || owner.server.up) return owner;
    return this.door.links.find((link) => link.server.up) ?? owner;
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    for (const stop of this.stops) stop();
  }
}

/** The arrival time of a packet sent after one that arrives at `last`: never before it (TCP order). */
function inOrder(at: number, last: number): number {
  return at > last ? at : last + 1e-6;
}
