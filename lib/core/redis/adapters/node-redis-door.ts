import calculateSlot from 'cluster-key-slot';
import { nodeRuntime } from '../../runtime/runtime';
import { printable } from '../../errors/message-text';
import { withDeadline } from '../../runtime/with-deadline';
import { LockRedisError } from '../../errors';
import { ClientListeners, type EventSource } from '../client-listeners';
import type { RedisArgs, RedisDoor, ScriptSend, WakeupSubscriber } from '../redis-door';
import type { LuaScript, ScriptArg } from '../script-library';
import { toResp2Shape } from './resp3-replies';

/**
 * The members of a node-redis (package `redis`, v5 and v6) client this adapter uses, declared here
 * so the package loads without node-redis: `createClient()`, `createCluster()` and `createSentinel()`
 * objects all have them, with `sendCommand` taking (args), (firstKey, isReadonly, args) and
 * (isReadonly, args) respectively.
 */
export interface NodeRedisLike extends EventSource {
  sendCommand(...args: unknown[]): Promise<unknown>;
  /** Absent on a v5 Sentinel. */
  duplicate?(overrides?: unknown): NodeRedisLike;
  connect(): Promise<unknown>;
  readonly isOpen: boolean;
  /** Absent on a v5 Cluster (its `isOpen` is all it says). */
  readonly isReady?: boolean;
  multi(routing?: string): NodeRedisMulti;
  subscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  unsubscribe(channels: string, listener?: PubSubListener): Promise<unknown>;
  sSubscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  sUnsubscribe(channels: string, listener?: PubSubListener): Promise<unknown>;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  destroy?(): unknown;
}

interface NodeRedisMulti {
  addCommand(args: string[]): NodeRedisMulti;
  exec(): Promise<unknown[]>;
}

type PubSubListener = (message: string, channel: string) => void;

/**
 * The members of a node-redis Cluster (v5 and v6) the door uses to follow a failover: the public
 * `slots` and `masters`, and `_slots.rediscover()`, the slot-map refresh node-redis runs itself on
 * MOVED (public in its typings, underscored; absent means the door cannot ask for it).
 */
interface NodeRedisClusterLike {
  /** Empty once the Cluster is closed. */
  readonly slots: readonly ({ master: ClusterNodeLike } | undefined)[];
  readonly masters: readonly ClusterNodeLike[];
  readonly _slots?: { rediscover?(startWith: NodeRedisLike): Promise<unknown> };
}

interface ClusterNodeLike {
  client?: NodeRedisLike;
  connectPromise?: Promise<unknown>;
}

/** The least time between two slot-map refreshes the door asks for (see NodeRedisDoor.followFailover). */
const REDISCOVER_INTERVAL_MS = 1000;

/** Which of node-redis' three entry points made the object. */
export type NodeRedisShape = 'client' | 'cluster' | 'sentinel';

/**
 * True when `value` is a node-redis client, Cluster or Sentinel (no lowercase `evalsha`: not
 * ioredis). A v5 Sentinel has no `duplicate()`: it is told by its `getMasterNode()`.
 */
export function isNodeRedis(value: object): value is NodeRedisLike {
  const v = value as Record<string, unknown>;
  return (
    typeof v.sendCommand === 'function' &&
    typeof v.connect === 'function' &&
    (typeof v.duplicate === 'function' || typeof v.getMasterNode === 'function') &&
    typeof v.evalsha !== 'function'
  );
}

function shapeOf(client: NodeRedisLike): NodeRedisShape {
  const c = client as unknown as Record<string, unknown>;
  if (typeof c.getSlotMaster === 'function') return 'cluster';
  if (typeof c.getMasterNode === 'function' && typeof c.acquire === 'function') return 'sentinel';
  return 'client';
}

/**
 * The door on node-redis: raw `sendCommand` (node-redis has no lowercase `evalsha`), routed by the
 * first key on a Cluster and always to the master through a Sentinel; replies reshaped from RESP3
 * (v6's default); a duplicate connection for wake-ups, SSUBSCRIBE on a Cluster routed by node-redis
 * to the shard that owns the channel. A client that is not connected yet is connected once, on first
 * use; the user's client is never closed (its user closes it, as the README says), and never
 * reopened after close().
 */
export class NodeRedisDoor implements RedisDoor {
  readonly family = 'node-redis' as const;
  readonly cluster: boolean;
  readonly ridesOutFailover: boolean;
  readonly owned = false;
  readonly label: string;
  private readonly shape: NodeRedisShape;
  private connecting?: Promise<unknown>;
  private closed = false;
  /** When the door last asked a Cluster for its slot map (monotonic ms). */
  private rediscoveredAt = -Infinity;
  /** Ours on the user's client, removed at close. */
  private readonly listeners: ClientListeners;

  constructor(
    readonly client: NodeRedisLike,
    /** False for a door that only sends commands (the fenced store): it adds nothing to the client. */
    hearsErrors = true,
  ) {
    this.shape = shapeOf(client);
    this.cluster = this.shape === 'cluster';
    this.ridesOutFailover = this.shape !== 'client';
    this.label = { client: 'Redis', cluster: 'Redis Cluster', sentinel: 'Redis (Sentinel)' }[this.shape];
    // node-redis throws an 'error' event nobody listens to; the engine hears errors through commands.
    this.listeners = new ClientListeners(client);
    if (hearsErrors) this.listeners.on('error', () => undefined);
  }

  get ready(): boolean {
    // A node-redis 5 Cluster has no isReady: open is the most it tells.
    return this.client.isReady ?? this.client.isOpen;
  }

  async script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    send: ScriptSend,
  ): Promise<unknown> {
    const command = send.readOnly
      ? send.reload
        ? 'EVAL_RO'
        : 'EVALSHA_RO'
      : send.reload
        ? 'EVAL'
        : 'EVALSHA';
    const words = [command, send.reload ? script.source : script.sha, String(keys.length), ...keys];
    for (const arg of args) words.push(String(arg));
    return toResp2Shape(await this.send(words, keys[0]));
  }

  async command(args: RedisArgs, routeKey?: string): Promise<unknown> {
    return toResp2Shape(await this.send(args.map(String), routeKey));
  }

  async transaction(commands: readonly RedisArgs[], routeKey: string): Promise<unknown[]> {
    await this.open();
    if (this.shape === 'cluster') await this.followFailover(routeKey);
    const multi = this.shape === 'cluster' ? this.client.multi(routeKey) : this.client.multi();
    for (const c of commands) multi.addCommand(c.map(String));
    try {
      return (await multi.exec()).map(toResp2Shape);
    } catch (err) {
      // A command that failed inside EXEC: node-redis rejects with every reply, errors in place.
      const replies = (err as { replies?: unknown[] }).replies;
      if (Array.isArray(replies)) return replies.map(toResp2Shape);
      throw err;
    }
  }

  subscriber(): WakeupSubscriber {
    // A v5 Sentinel cannot be duplicated: its own pub/sub connection (which follows the master) is
    // used, and left open at close (only this library's subscriptions are dropped).
    if (!this.client.duplicate) return new NodeRedisSubscriber(this.client, () => this.open());
    return new NodeRedisSubscriber(this.client.duplicate());
  }

  watch(listener: (state: 'up' | 'down', reason?: string) => void): void {
    this.listeners.on('ready', () => listener('up'));
    // A Cluster's node connection made again: its server may have lost the locks it had. Only a node
    // connected before counts: a first connection to a node found nothing lost.
    if (this.cluster) {
      const seen = new Set<string>();
      this.listeners.on('node-ready', (node: { host?: string; port?: number }) => {
        const address = `${node.host}:${node.port}`;
        if (seen.has(address)) listener('up');
        else seen.add(address);
      });
    }
    this.listeners.on('error', (error: Error) => listener('down', printable(error.message || error.name)));
  }

  fatalError(): LockRedisError | undefined {
    return undefined; // the user's client: its reconnect policy is the user's
  }

  async close(): Promise<void> {
    // Never the user's client, even one this door connected: its user closes it (closing it here
    // would make their own close() throw). Subscribers close with the hub.
    this.closed = true;
    this.listeners.removeAll();
  }

  private async send(words: string[], routeKey: string | undefined): Promise<unknown> {
    await this.open();
    if (this.shape === 'cluster') {
      await this.followFailover(routeKey);
      return this.client.sendCommand(routeKey, false, words);
    }
    // Sentinel: isReadonly false, so the command goes to the master even with `useReplicas`.
    if (this.shape === 'sentinel') return this.client.sendCommand(false, words);
    return this.client.sendCommand(words);
  }

  /**
   * Before a command for `routeKey`'s slot whose master is not connected (its connection lost and
   * reconnecting), asks the Cluster for its slot map again, from a master that is connected, at most
   * once a second. node-redis 5 refreshes the map only on MOVED or ASK: after its master dies a slot
   * stays on the dead node for good (the node's client reconnects to it forever and its commands
   * wait in the offline queue), so no command reaches the promoted replica. node-redis 6 also
   * refreshes 5 s after a node starts reconnecting (`topologyRefreshOnReconnectionAttempt`); this
   * refresh, on the lock's own path, is the same call. The refresh replaces the dead node, whose
   * queued commands node-redis then fails. Before the promotion the map is unchanged: the command
   * waits for the dead master as before, and the next one asks again.
   */
  private async followFailover(routeKey: string | undefined): Promise<void> {
    if (routeKey === undefined) return;
    const cluster = this.client as unknown as NodeRedisClusterLike;
    const master = cluster.slots[calculateSlot(routeKey)]?.master;
    // No client yet, or one connecting for the first time: node-redis connects it as it should.
    if (!master?.client || master.connectPromise || master.client.isReady) return;
    const rediscover = cluster._slots?.rediscover;
    const live = cluster.masters.find((m) => m.client?.isReady)?.client;
    if (!rediscover || !live || nodeRuntime.now() - this.rediscoveredAt < REDISCOVER_INTERVAL_MS) return;
    this.rediscoveredAt = nodeRuntime.now();
    try {
      await rediscover.call(cluster._slots, live);
    } catch {
      // Every node that did not answer was reported on the Cluster's 'error' event by node-redis
      // (heard by watch()); the command goes on with the map it has, failing or waiting as before.
    }
  }

  /** @internal Connects a client the user passed unconnected, once (a client they closed stays closed: its commands fail). */
  open(): Promise<unknown> | undefined {
    if (this.client.isOpen) return undefined;
    // Never again after close(): a late call (a registry write still under way) would reopen it.
    if (this.closed)
      return Promise.reject(new LockRedisError('The lock service closed its Redis connection'));
    // In the engine's context: the socket's callbacks must not run in the first caller's (issue 47).
    this.connecting ??= nodeRuntime
      .detached(() => this.client.connect())
      .catch((err: unknown) => {
        this.connecting = undefined;
        throw err;
      });
    return this.connecting;
  }
}

/**
 * A duplicate connection for wake-ups. node-redis restores its subscriptions after a reconnect
 * itself (and on a Cluster follows a moved slot), so there is no `onReconnect`. On RESP2 (v5) a
 * subscribing connection runs no other command: this one never does.
 */
class NodeRedisSubscriber implements WakeupSubscriber {
  private readonly listeners: ((channel: string, message: string) => void)[] = [];
  private connecting?: Promise<unknown>;
  /** Channels subscribed here (unsubscribed at close when the connection is the user's). */
  private readonly subscribed = new Map<string, boolean>();
  private readonly deliver: PubSubListener = (message, channel) => {
    for (const listener of this.listeners) listener(channel, message);
  };
  /** Ours on the connection (the user's client, on a v5 Sentinel), removed at close. */
  private readonly own: ClientListeners;
  private closed = false;
  /**
   * SUBSCRIBEs on the wire. A Cluster client opens a shard's pub/sub connection while it sends one:
   * close() waits for them, or that connection would open after the client closed, with nothing left
   * to close it.
   */
  private readonly sending = new Set<Promise<unknown>>();

  constructor(
    private readonly sub: NodeRedisLike,
    /** For the user's own client (not a duplicate this library opened and closes): how the door connects it. */
    private readonly shared?: () => Promise<unknown> | undefined,
  ) {
    this.own = new ClientListeners(sub);
    this.own.on('error', () => undefined); // reconnects are node-redis' job; waiters poll meanwhile
  }

  async subscribe(channel: string, sharded: boolean): Promise<void> {
    await this.open();
    // Closed while connecting: a SUBSCRIBE now would open the connection again (a Sentinel or
    // Cluster client connects its pub/sub clients on demand), and nothing would close it.
    if (this.closed) return;
    this.subscribed.set(channel, sharded);
    const sent = sharded
      ? this.sub.sSubscribe(channel, this.deliver)
      : this.sub.subscribe(channel, this.deliver);
    this.sending.add(sent);
    try {
      await sent;
    } finally {
      this.sending.delete(sent);
    }
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<void> {
    this.subscribed.delete(channel);
    if (!this.sub.isOpen) return;
    await (sharded
      ? this.sub.sUnsubscribe(channel, this.deliver)
      : this.sub.unsubscribe(channel, this.deliver));
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.length = 0;
    if (!this.shared) {
      // A duplicate of ours: its error listener stays while it closes (node-redis would throw the
      // error of a failed close otherwise).
      if (this.sending.size > 0) {
        // Bounded: with Redis away, node-redis queues the SUBSCRIBE until it is back. One still on the
        // wire after that (a starved machine) may open a shard's connection when it ends: the client is
        // destroyed again then.
        const sent = Promise.allSettled([...this.sending]);
        await withDeadline(nodeRuntime, sent, 1000).catch(
          () => void sent.then(() => destroyQuietly(this.sub)),
        );
      }
      if (this.connecting) await endConnection(this.sub, this.connecting);
      return;
    }
    this.own.removeAll();
    if (!this.sub.isOpen) return;
    const left = [...this.subscribed];
    this.subscribed.clear();
    // The user's connection stays open: only this library's listeners leave it (bounded: with Redis
    // away, node-redis queues the UNSUBSCRIBE until it is back).
    await withDeadline(
      nodeRuntime,
      Promise.all(
        left.map(([channel, sharded]) => this.unsubscribe(channel, sharded).catch(() => undefined)),
      ),
      1000,
    );
  }

  private open(): Promise<unknown> | undefined {
    if (this.shared) return this.shared();
    // Failures reach the subscribe() that awaits this; the stored promise must not reject unheard.
    this.connecting ??= nodeRuntime.detached(() => this.sub.connect());
    this.connecting.catch(() => undefined);
    return this.connecting;
  }
}

/**
 * Closes a connection this library opened (`connecting`: its connect()). No step may hang: with
 * Redis away, node-redis' connect() retries until it reaches it, and a QUIT is never answered.
 */
async function endConnection(client: NodeRedisLike, connecting: Promise<unknown>): Promise<void> {
  connecting.catch(() => undefined); // a connect still retrying fails once destroyed
  if (!client.isOpen) return;
  // Still connecting: a Cluster closed or destroyed while it discovers its slots opens its nodes'
  // connections afterwards all the same, and nothing closes them (node-redis 5 and 6; a v5 Cluster
  // has no isReady to tell). A connect that can finish is given a moment to (Redis up: milliseconds;
  // one that finished long ago: none), then closed like any other.
  let ended = false;
  const settled = connecting.then(
    () => (ended = true),
    () => (ended = true),
  );
  await withDeadline(nodeRuntime, settled, 1000).catch(() => undefined);
  // A connect that outlasts the wait (a starved machine: a CI run at load 10 left a Cluster
  // subscriber's socket open after close()) opens its nodes' connections when it ends: destroyed then.
  if (!ended) void settled.then(() => destroyQuietly(client));
  if (!client.isOpen) return;
  // Not ready (still connecting, or reconnecting): nothing to say goodbye to, destroyed below.
  if (client.isReady !== false) {
    const end = client.close ?? client.quit;
    try {
      await withDeadline(nodeRuntime, Promise.resolve(end?.call(client)), 1000);
    } catch {
      // A server that died meanwhile does not answer QUIT: the socket is destroyed below either way.
    }
  }
  if (client.isOpen) client.destroy?.();
}

/** Destroys a client this library opened, if it is still open (a second destroy() would throw). */
function destroyQuietly(client: NodeRedisLike): void {
  try {
    if (client.isOpen) client.destroy?.();
  } catch {
    // closed meanwhile: nothing left to destroy
  }
}
