import calculateSlot from 'cluster-key-slot';
// Types only: ioredis itself is loaded on first use (openIoredis), so the package loads without it.
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { LockRedisError } from '../../errors';
import { printable } from '../../errors/message-text';
import { nodeRuntime } from '../../runtime/runtime';
import { withDeadline } from '../../runtime/with-deadline';
import { clientPackageMissing, ifPeerMissing } from '../../errors/optional-peer';
import type { ClientFamily, RedisArgs, RedisDoor, ScriptSend, WakeupSubscriber } from '../redis-door';
import type { LuaScript, ScriptArg } from '../script-library';
import { ValkeyShardedSubscriber } from './valkey-sharded-subscriber';
import { ClientListeners, type EventSource } from '../client-listeners';

/** An ioredis (or iovalkey, which copies its API) Redis or Cluster. */
export type IoredisClient = Redis | Cluster;
export type { RedisOptions } from 'ioredis';

/** True for an ioredis/iovalkey Cluster (duck-typed, so a second copy of the library still works). */
export function isIoredisCluster(client: object): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/**
 * The door on ioredis and iovalkey: EVALSHA/EVAL with the array arguments ioredis flattens, WAIT on
 * the pooled connection of the key's master, MULTI/EXEC, a duplicate subscriber (ioredis' sharded
 * subscribers on a Cluster; on an iovalkey Cluster, which has none, one SSUBSCRIBE connection per
 * master of a subscribed slot). RESP2: replies need no normalising.
 */
export class IoredisDoor implements RedisDoor {
  readonly cluster: boolean;
  readonly ridesOutFailover: boolean;
  readonly prefixesKeys: boolean;
  readonly label: string;
  /** The open write batch (coalesceWrites). */
  private batch?: WriteBatch;
  /** Ours on the client (the user's, when passed in), removed at close. */
  private readonly listeners: ClientListeners;
  /** Ours on a Cluster's node clients (watch), removed when ioredis drops the node ('-node') or at close. */
  private readonly nodeListeners = new Map<EventSource, ClientListeners>();

  constructor(
    readonly client: IoredisClient,
    readonly owned: boolean,
    readonly family: Extract<ClientFamily, 'ioredis' | 'iovalkey'> = 'ioredis',
  ) {
    this.cluster = isIoredisCluster(client);
    this.ridesOutFailover = this.cluster || Boolean((client as Redis).options?.sentinels?.length);
    this.label = this.cluster ? 'Redis Cluster' : 'Redis';
    // Read from the client's options (Redis and Cluster alike); a user's client may carry one.
    this.prefixesKeys = Boolean((client as { options?: { keyPrefix?: string } }).options?.keyPrefix);
    this.listeners = new ClientListeners(client);
  }

  get ready(): boolean {
    return this.client.status === 'ready';
  }

  script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    send: ScriptSend,
  ): Promise<unknown> {
    this.connectDetached();
    this.coalesceWrites();
    // ioredis flattens array arguments itself: keys and args go as they are, not copied by a spread.
    const client = this.client as unknown as RawCommands;
    if (send.readOnly) {
      return send.reload
        ? client.call('EVAL_RO', script.source, keys.length, keys, args)
        : client.call('EVALSHA_RO', script.sha, keys.length, keys, args);
    }
    return send.reload
      ? client.eval(script.source, keys.length, keys, args)
      : client.evalsha(script.sha, keys.length, keys, args);
  }

  command(args: RedisArgs, routeKey?: string): Promise<unknown> {
    this.connectDetached();
    const [name, ...rest] = args;
    return this.nodeFor(routeKey).call(String(name), ...rest);
  }

  async transaction(commands: readonly RedisArgs[], routeKey: string): Promise<unknown[]> {
    void routeKey; // ioredis routes a Cluster transaction by its keys itself
    this.connectDetached();
    // ioredis builds the batch from its command methods, which are lower case.
    const batch = commands.map(([name, ...rest]) => [String(name).toLowerCase(), ...rest.map(String)]);
    const replies = await this.client.multi(batch).exec();
    if (!replies) throw new LockRedisError('the transaction was discarded');
    return replies.map(([err, reply]) => err ?? reply);
  }

  subscriber(): WakeupSubscriber {
    if (this.cluster && this.family === 'iovalkey') {
      return new ValkeyShardedSubscriber(this.client as Cluster, (node) => {
        const sub = node.duplicate({ autoResubscribe: false, disconnectTimeout: DISCONNECT_TIMEOUT_MS });
        stopOnFatalErrors(sub);
        return new IoredisSubscriber(sub);
      });
    }
    return new IoredisSubscriber(duplicateForSubscriber(this.client));
  }

  /**
   * A lazyConnect client (the ones this library opens) connects on its first command, in that
   * command's async context, and its socket then calls back there for the connection's life: its
   * events, reconnects and the checks they start would run in the first caller's AsyncLocalStorage
   * and trace (issue 47). It connects here instead, in the engine's own context. One read per call.
   */
  private connectDetached(): void {
    const client = this.client;
    if (client.status !== 'wait') return;
    // The commands queued behind this connect hear why it failed; this promise has nothing to add.
    nodeRuntime.detached(() => client.connect()).catch(() => undefined);
  }

  /**
   * While replies are pending, scripts leave in batches: the first corks the socket of a standalone or
   * Sentinel connection, and the call after the WRITE_BATCH-th or the end of the tick uncorks it, so a
   * batch is one write. ioredis writes each command with a syscall of its own, the largest single cost
   * of a call on the client. A lone call (nothing in flight) goes out at once, as before. Unlike
   * ioredis' auto-pipelining, a batch never waits for the replies of the one before.
   */
  private coalesceWrites(): void {
    const open = this.batch;
    if (open) {
      if (open.calls < WRITE_BATCH) {
        open.calls++;
        return;
      }
      this.endBatch(open); // full: it leaves now, and this call opens the next one
    }
    // Read as optional: a client shaped like ioredis without its internals (a test double) sends
    // every call at once.
    const client = this.client as Partial<Pick<Redis, 'commandQueue' | 'stream' | 'status'>>;
    const stream = client.stream;
    if (this.cluster || client.status !== 'ready' || !client.commandQueue?.length) return;
    if (typeof stream?.cork !== 'function') return;
    const batch: WriteBatch = { stream, calls: 1 };
    this.batch = batch;
    batch.stream.cork();
    process.nextTick(() => this.endBatch(batch));
  }

  private endBatch(batch: WriteBatch): void {
    if (this.batch !== batch) return; // ended already
    this.batch = undefined;
    batch.stream.uncork();
  }

  watch(listener: (state: 'up' | 'down', reason?: string) => void): void {
    const client = this.client;
    this.listeners.on('ready', () => listener('up'));
    if (this.cluster) {
      // A node's connection made again (after a node restart ioredis connects anew, when a command
      // needs that node): its server may have lost the locks it had. Only a node connected before
      // counts: a first connection (ioredis opens them lazily) found nothing lost. The listeners on
      // a node client are removed when ioredis drops the node (topology churn) or at close (a user's
      // cluster outlives the engine).
      const seen = new Set<string>();
      this.listeners.on('+node', (node: EventSource & { options?: { host?: string; port?: number } }) => {
        const address = `${node.options?.host}:${node.options?.port}`;
        const listeners = new ClientListeners(node);
        listeners.on('ready', () => (seen.has(address) ? listener('up') : seen.add(address)));
        this.nodeListeners.set(node, listeners);
      });
      this.listeners.on('-node', (node: EventSource) => {
        this.nodeListeners.get(node)?.removeAll();
        this.nodeListeners.delete(node);
      });
    }
    this.listeners.on('error', (error: Error) =>
      listener('down', fatalErrors.get(client)?.message ?? printable(error.message || error.name)),
    );
    this.listeners.on('close', () => {
      // A close we asked for (quit/disconnect at shutdown) is not an outage.
      if (client.status !== 'end') listener('down', 'connection closed');
    });
  }

  fatalError(): LockRedisError | undefined {
    return fatalErrors.get(this.client);
  }

  async close(): Promise<void> {
    if (this.owned) await closeConnection(this.client);
    this.listeners.removeAll();
    for (const listeners of this.nodeListeners.values()) listeners.removeAll();
    this.nodeListeners.clear();
  }

  /** The connection a command for `routeKey` goes to: on a Cluster the pooled connection to its slot's master. */
  private nodeFor(routeKey: string | undefined): RawCommands {
    const client = this.client;
    if (routeKey === undefined || !isIoredisCluster(client)) return client as unknown as RawCommands;
    const owner = client.slots[calculateSlot(routeKey)]?.[0];
    const node = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
    if (!node) throw new LockRedisError(`No connection to the master of the slot of ${routeKey}`);
    return node as unknown as RawCommands;
  }
}

/** Scripts sent on a corked socket, to leave in one write (IoredisDoor.coalesceWrites). */
interface WriteBatch {
  readonly stream: Redis['stream'];
  /** Calls in it so far (at most WRITE_BATCH). */
  calls: number;
}

/** The ioredis commands the door sends, with the array arguments ioredis flattens (its types do not say so). */
interface RawCommands {
  evalsha(...args: unknown[]): Promise<unknown>;
  eval(...args: unknown[]): Promise<unknown>;
  call(...args: unknown[]): Promise<unknown>;
}

/**
 * A subscriber connection of ioredis/iovalkey (or an object with its shape: the in-memory testing
 * backend's stand-in). On a standalone or Sentinel connection ioredis' own resubscription is off (see
 * duplicateForSubscriber), so `onReconnect` tells the hub to subscribe again; a Cluster's sharded
 * subscribers follow their slots themselves.
 */
export class IoredisSubscriber implements WakeupSubscriber {
  onReconnect?: (listener: () => void) => void;

  constructor(private readonly sub: IoredisClient) {
    sub.on('error', () => undefined); // reconnects are the client's job; waiters poll meanwhile
    if (!isIoredisCluster(sub)) {
      this.onReconnect = (listener) => {
        let connectedBefore = false;
        sub.on('ready', () => {
          // The first connection sends the subscriptions queued for it.
          if (connectedBefore) listener();
          connectedBefore = true;
        });
      };
    }
  }

  async subscribe(channel: string, sharded: boolean): Promise<void> {
    await (sharded ? this.sub.ssubscribe(channel) : this.sub.subscribe(channel));
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<void> {
    await (sharded ? this.sub.sunsubscribe(channel) : this.sub.unsubscribe(channel));
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.sub.on('message', listener);
    this.sub.on('smessage', listener);
  }

  close(): Promise<void> {
    this.sub.removeAllListeners('message');
    this.sub.removeAllListeners('smessage');
    return closeConnection(this.sub);
  }
}

/** Opens an ioredis connection for a URL or ioredis options (ioredis loaded now, on first use). */
export function openIoredis(option: string | RedisOptions): IoredisDoor {
  const ioredis = ioredisPackage();
  // lazyConnect: no socket until the first command, so building an engine that is never used (a
  // Nest app whose start-up fails later) leaves nothing open.
  let client: Redis;
  if (typeof option === 'string') {
    client = new ioredis.Redis(option, { ...CLIENT_DEFAULTS, lazyConnect: true });
  } else {
    const defaults = option.sentinels ? { ...CLIENT_DEFAULTS, ...SENTINEL_DEFAULTS } : CLIENT_DEFAULTS;
    client = new ioredis.Redis({ ...defaults, lazyConnect: true, ...option });
  }
  // Connection trouble reaches callers as LockRedisError from the commands it fails; without a
  // listener ioredis would also print every reconnect error of a client we own to the console.
  client.on('error', () => undefined);
  stopOnFatalErrors(client);
  reopenAfterSentinelGaveUp(client);
  return new IoredisDoor(client, true);
}

const fatalErrors = new WeakMap<object, LockRedisError>();
/** Connections this library is closing (closeConnection): their `end` is no outage. */
const closedByUs = new WeakSet<object>();

/**
 * ioredis (6.0, and iovalkey 0.4, its fork) can end a Sentinel connection for good by itself. While
 * the connection is down, the `failoverDetector` of its last connection still listens to the
 * sentinels; a `+switch-master` then calls the connector's disconnect(), and if the client was just
 * asking a sentinel for the master's address (each reconnect attempt does), its connect() fails with
 * "Connection is closed." and the client goes to `end`: no reconnect ever again, every command fails
 * at once (SentinelConnector.connect / Redis._connect). Seen in back-to-back failovers (issue 43):
 * an engine's every call failed until the process restarted. On a Sentinel connection the library
 * opened, an `end` right after that error connects again, unless the library ended it (close, a fatal
 * error). Any other end is left alone: a `sentinelRetryStrategy` that gave up meant it.
 */
function reopenAfterSentinelGaveUp(client: Redis): void {
  if (!client.options.sentinels?.length) return;
  // ioredis emits the connect's error just before `end`, and never while we disconnect on purpose.
  let lastError: string | undefined;
  client.on('error', (error: Error) => (lastError = error.message));
  client.on('ready', () => (lastError = undefined));
  client.on('end', () => {
    if (lastError !== CONNECTION_CLOSED || closedByUs.has(client) || fatalErrors.has(client)) return;
    lastError = undefined;
    // A connect that fails the same way ends up here again; callers hear of it from their commands.
    client.connect().catch(() => undefined);
  });
}

/** ioredis' words when a connect is cut short (its CONNECTION_CLOSED_ERROR_MSG). */
const CONNECTION_CLOSED = 'Connection is closed.';

/**
 * Retrying cannot fix credentials or a certificate: ioredis would reconnect and authenticate again
 * about twice a second forever. On such an error the connection is closed once, and the reason kept.
 */
function stopOnFatalErrors(client: IoredisClient): void {
  client.on('error', (error: Error & { code?: string }) => {
    if (fatalErrors.has(client)) return;
    const why = fatalReason(error);
    if (!why) return;
    fatalErrors.set(client, new LockRedisError(`${why}; not retrying`, undefined, error));
    client.disconnect();
  });
}

const AUTH_ERROR =
  /^(WRONGPASS|NOAUTH|NOPERM this user has no permissions to run the 'auth'|ERR invalid password|ERR AUTH)/;
const TLS_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function fatalReason(error: Error & { code?: string }): string | undefined {
  const message = printable(error.message ?? '');
  if (AUTH_ERROR.test(error.message ?? '')) {
    return `Redis refused the credentials (${message}): check the password and ACL user (docs/SECURITY.md)`;
  }
  if (error.code !== undefined && TLS_ERROR_CODES.has(error.code)) {
    return (
      `Redis' TLS certificate was rejected (${message}, ${error.code}): pass the CA that signed it ` +
      `as tls: { ca } (docs/SECURITY.md)`
    );
  }
  return undefined;
}

/**
 * How long ioredis waits, after ending a socket on disconnect(), for it to close before destroying
 * it (its default is 2 s). That wait is a timer only the socket's 'close' event clears: a socket that
 * had already closed (Redis down at close()) never emits it again, and the timer kept the process
 * alive 2 s after close(). Set on the connections this library opens.
 */
const DISCONNECT_TIMEOUT_MS = 200;

/**
 * Calls per write batch (coalesceWrites). Measured with 64 callers (docs/BENCHMARKS.md): batches of 8
 * took the socket writes from 23 % to 13 % of the client's CPU; a whole tick per batch cut as much but
 * left Redis idle while the client built the next one (25,000 → 16,500 ops/s).
 */
const WRITE_BATCH = 8;

/**
 * For connections we open. Reconnect soon and often (after 10, 20, 30, 40 ms, then every 50 ms instead of
 * ioredis' 50 ms more per attempt up to 2 s): after a restart each engine checks its locks the moment it is
 * back, so processes that reconnect close together learn close together (docs/GUARANTEES.md). Queued
 * commands fail after 8 attempts, about 300 ms, as 3 of ioredis' own did, instead of its 20.
 */
const CLIENT_DEFAULTS: RedisOptions = {
  retryStrategy: (times) => Math.min(times * 10, 50),
  maxRetriesPerRequest: 8,
  disconnectTimeout: DISCONNECT_TIMEOUT_MS,
};

/**
 * For Sentinel connections we open: follow `+switch-master` at once (a frozen or partitioned old
 * master would otherwise keep the connection), and reconnect when a demoted master answers READONLY.
 */
const SENTINEL_DEFAULTS: RedisOptions = {
  failoverDetector: true,
  reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
};

/**
 * A dedicated subscriber connection for wake-ups, with the same target and options as `client`.
 * On an ioredis Cluster it uses ioredis' sharded subscribers: one connection per master that serves a
 * subscribed slot, moved by ioredis when the slot's owner changes (failover, MOVED, migration).
 * Elsewhere ioredis' own resubscription after a reconnect is off: it leaves its SUBSCRIBE promises
 * unhandled, so a close before Redis answers them was an unhandled rejection in the user's process.
 * The WakeupHub resubscribes such a connection itself.
 */
function duplicateForSubscriber(client: IoredisClient): IoredisClient {
  const sub = isIoredisCluster(client)
    ? client.duplicate([], { shardedSubscribers: true })
    : client.duplicate({ autoResubscribe: false, disconnectTimeout: DISCONNECT_TIMEOUT_MS });
  stopOnFatalErrors(sub);
  if (!isIoredisCluster(sub)) reopenAfterSentinelGaveUp(sub);
  return sub;
}

/**
 * QUIT with a deadline, then disconnect: a dead or frozen server must not hang shutdown, and a
 * connection that drops before QUIT is answered ("Connection is closed.") must not fail it.
 */
export async function closeConnection(client: IoredisClient, graceMs = 1000): Promise<void> {
  closedByUs.add(client);
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    await withDeadline(
      nodeRuntime,
      client.quit().catch(() => undefined),
      graceMs,
    );
  }
  client.disconnect();
}

/** The ioredis package, for a URL or ioredis options (lib/core/errors/optional-peer.ts). */
function ioredisPackage(): { Redis: new (...args: unknown[]) => Redis } {
  try {
    return require('ioredis') as { Redis: new (...args: unknown[]) => Redis };
  } catch (error) {
    throw (
      ifPeerMissing(error, 'ioredis') ?? clientPackageMissing('ioredis', 'A Redis URL or ioredis options')
    );
  }
}
