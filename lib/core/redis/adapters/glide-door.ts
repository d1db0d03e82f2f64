import type { LockRedisError } from '../../errors';
import { nodeRuntime } from '../../runtime/runtime';
import { withDeadline } from '../../runtime/with-deadline';
import { clientPackageMissing, ifPeerMissing } from '../../errors/optional-peer';
import type { RedisArgs, RedisDoor, ScriptSend, WakeupSubscriber } from '../redis-door';
import type { LuaScript, ScriptArg } from '../script-library';
import { toResp2Shape } from './resp3-replies';

/**
 * The members of a Valkey GLIDE (2.x) `GlideClient` / `GlideClusterClient` this adapter uses,
 * declared here so the package loads without `@valkey/valkey-glide`.
 */
export interface GlideLike {
  customCommand(args: string[], options?: { route?: unknown }): Promise<unknown>;
  invokeScript(...args: unknown[]): Promise<unknown>;
  exec(batch: unknown, raiseOnError: boolean): Promise<unknown[] | null>;
  subscribe(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  unsubscribe(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  ssubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  sunsubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  close(errorMessage?: string): void;
}

interface GlideClass {
  createClient(config: Record<string, unknown>): Promise<GlideLike>;
}

interface GlideBatchModule {
  Batch: new (atomic: boolean) => { customCommand(args: string[]): unknown };
  ClusterBatch: new (atomic: boolean) => { customCommand(args: string[]): unknown };
}

/** True when `value` is a GLIDE client (it runs scripts with `invokeScript`, raw commands with `customCommand`). */
export function isGlide(value: object): value is GlideLike {
  const v = value as Record<string, unknown>;
  return typeof v.customCommand === 'function' && typeof v.invokeScript === 'function';
}

function isGlideCluster(client: GlideLike): boolean {
  // GlideClusterClient routes commands: only it has the *WithRoute variants.
  return typeof (client as unknown as Record<string, unknown>).fcallWithRoute === 'function';
}

/** The scripts sent with EVAL, per GLIDE client (see GlideDoor.sent). */
const sentScripts = new WeakMap<GlideLike, Set<string>>();

/** How long a channel left by its last waiter stays subscribed on a GLIDE subscriber. */
const LINGER_MS = 2000;

/** How long a subscription may take to be confirmed (GLIDE's blocking subscribe takes a timeout). */
const SUBSCRIBE_TIMEOUT_MS = 5000;

/**
 * The door on Valkey GLIDE: EVALSHA/EVAL through `customCommand` (routed to the primary of the first
 * key's slot on a Cluster) rather than `invokeScript`, so the gateway keeps its one EVALSHA → EVAL
 * path and no `Script` object needs releasing; GLIDE's `NoScriptError` is told to the gateway as
 * `NOSCRIPT`. RESP3 replies reshaped. GLIDE has no `duplicate()` and delivers messages only to a
 * callback set when a client is created, so the wake-up subscriber is a second client created from
 * the user's client's own configuration with that callback; its subscriptions are made at run time.
 * GLIDE's own request timeout (250 ms by default) still applies to every command it sends.
 */
export class GlideDoor implements RedisDoor {
  readonly family = 'glide' as const;
  readonly cluster: boolean;
  readonly ridesOutFailover: boolean;
  readonly owned = false;
  readonly label: string;
  /**
   * Scripts this door has sent with EVAL at least once. GLIDE logs a warning for every NOSCRIPT
   * reply, so each script's first call goes out as EVAL (which also caches it) instead of an EVALSHA
   * bound to fail; later calls use EVALSHA, and a SCRIPT FLUSH costs one NOSCRIPT and a reload.
   */
  private readonly sent: Set<string>;

  constructor(readonly client: GlideLike) {
    // Per client: every engine on one (multiplexed) GLIDE client shares its server's script cache.
    let sent = sentScripts.get(client);
    if (!sent) sentScripts.set(client, (sent = new Set()));
    this.sent = sent;
    this.cluster = isGlideCluster(client);
    this.ridesOutFailover = this.cluster;
    this.label = this.cluster ? 'Redis Cluster' : 'Redis';
  }

  /** GLIDE clients are connected when created (`await GlideClient.createClient(...)`). */
  get ready(): boolean {
    return (this.client as unknown as { isClosed?: boolean }).isClosed !== true;
  }

  async script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    send: ScriptSend,
  ): Promise<unknown> {
    const reload = send.reload || !this.sent.has(script.sha);
    const command = (reload ? 'EVAL' : 'EVALSHA') + (send.readOnly ? '_RO' : '');
    const words = [command, reload ? script.source : script.sha, String(keys.length), ...keys];
    for (const arg of args) words.push(String(arg));
    const reply = await this.send(words, keys[0]);
    if (reload) this.sent.add(script.sha);
    return reply;
  }

  command(args: RedisArgs, routeKey?: string): Promise<unknown> {
    return this.send(args.map(String), routeKey);
  }

  async transaction(commands: readonly RedisArgs[], routeKey: string): Promise<unknown[]> {
    void routeKey; // an atomic batch goes to the node of its keys
    const glide = glideBatches();
    const batch = this.cluster ? new glide.ClusterBatch(true) : new glide.Batch(true);
    for (const c of commands) batch.customCommand(c.map(String));
    let replies: unknown[] | null;
    try {
      replies = await this.client.exec(batch, false);
    } catch (err) {
      throw glideError(err);
    }
    if (!replies) throw new Error('EXECABORT the transaction was discarded');
    return replies.map((r) => (r instanceof Error ? glideError(r) : toResp2Shape(r)));
  }

  subscriber(): WakeupSubscriber {
    return new GlideSubscriber(this.client);
  }

  watch(): void {
    // GLIDE has no connection events: its failures show in the commands that fail.
  }

  fatalError(): LockRedisError | undefined {
    return undefined;
  }

  async close(): Promise<void> {
    // Never the user's client.
  }

  private async send(words: string[], routeKey: string | undefined): Promise<unknown> {
    const route = routeKey === undefined ? 'randomNode' : { type: 'primarySlotKey', key: routeKey };
    try {
      const reply = await (this.cluster
        ? this.client.customCommand(words, { route })
        : this.client.customCommand(words));
      return toResp2Shape(reply);
    } catch (err) {
      throw glideError(err);
    }
  }
}

/**
 * GLIDE's errors in Redis' words: its RequestError for a missing script names `NoScriptError`
 * (the gateway reloads on a message starting with NOSCRIPT), and server errors may come wrapped
 * ("An error was signalled by the server - ResponseError: NOPERM …"): the Redis error code leads again.
 */
function glideError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const text = err.message;
  if (/NoScriptError|NOSCRIPT/.test(text) && !text.startsWith('NOSCRIPT')) {
    return Object.assign(new Error(`NOSCRIPT ${text}`), { cause: err });
  }
  const wrapped =
    /(?:ResponseError|ExtensionError|signalled by the server)[:\s-]*([A-Z]{2,}[A-Z_]* .*)$/s.exec(text);
  if (wrapped && !text.startsWith(wrapped[1]!)) {
    return Object.assign(new Error(wrapped[1]), { cause: err, name: err.name });
  }
  return err;
}

/**
 * A second GLIDE client for wake-ups, created from the user's client's configuration (GLIDE keeps it
 * as `config`) plus a pub/sub callback, since GLIDE hands messages only to a callback or queue fixed
 * at creation. GLIDE restores subscriptions after a reconnect itself. Closed by close().
 */
class GlideSubscriber implements WakeupSubscriber {
  private readonly listeners: ((channel: string, message: string) => void)[] = [];
  private client?: Promise<GlideLike>;
  private closed = false;
  /** Channels whose unsubscribe is held back (see unsubscribe). */
  private readonly lingering = new Map<string, NodeJS.Timeout>();
  /** The last subscription change of each channel still in flight (see inOrder). */
  private readonly changes = new Map<string, Promise<void>>();

  constructor(private readonly source: GlideLike) {}

  async subscribe(channel: string, sharded: boolean): Promise<void> {
    const lingering = this.lingering.get(channel);
    if (lingering) {
      // Still subscribed (its unsubscribe was held back): nothing to ask GLIDE.
      clearTimeout(lingering);
      this.lingering.delete(channel);
      return;
    }
    await this.inOrder(channel, async () => {
      const sub = await this.open();
      if (sharded && sub.ssubscribe) await sub.ssubscribe([channel], SUBSCRIBE_TIMEOUT_MS);
      else await sub.subscribe([channel], SUBSCRIBE_TIMEOUT_MS);
    });
  }

  /**
   * Unsubscribes LINGER_MS later, unless the channel is subscribed again meanwhile. GLIDE confirms a
   * subscription change only when its background reconciliation has run (tens of ms, far longer than
   * one SUBSCRIBE round trip): a channel left by its last waiter and joined by the next one moments
   * later (a lock passing back and forth) would otherwise make each new waiter wait for that, and a
   * local hand-off told while it waits was lost until its backoff.
   */
  async unsubscribe(channel: string, sharded: boolean): Promise<void> {
    if (!this.client || this.closed || this.lingering.has(channel)) return;
    const client = this.client;
    const timer = setTimeout(() => {
      this.lingering.delete(channel);
      this.inOrder(channel, async () => {
        const sub = await client;
        if (sharded && sub.sunsubscribe) await sub.sunsubscribe([channel], SUBSCRIBE_TIMEOUT_MS);
        else await sub.unsubscribe([channel], SUBSCRIBE_TIMEOUT_MS);
      }).catch(() => undefined); // a closed client has no subscription left to drop
    }, LINGER_MS);
    timer.unref();
    this.lingering.set(channel, timer);
  }

  /**
   * Runs one channel's subscription changes one after the other. GLIDE reconciles subscriptions in
   * the background toward the set last asked for: an UNSUBSCRIBE still in flight when the same
   * channel is subscribed again (the last waiter left, a new one came) could otherwise land last and
   * leave the new waiter deaf, woken only by its backoff.
   */
  private inOrder(channel: string, change: () => Promise<void>): Promise<void> {
    const previous = this.changes.get(channel) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(change);
    const settled = next.catch(() => undefined);
    this.changes.set(channel, settled);
    void settled.then(() => {
      if (this.changes.get(channel) === settled) this.changes.delete(channel);
    });
    return next;
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.length = 0;
    const lingering = [...this.lingering.keys()];
    for (const timer of this.lingering.values()) clearTimeout(timer);
    this.lingering.clear();
    // GLIDE's close() does not wait for its sockets: drop the held-back subscriptions first, so none
    // is left on the server once close() resolves (bounded: a dead server does not hold shutdown).
    const sub = this.client && (await this.client.catch(() => undefined));
    if (sub && lingering.length > 0) {
      await withDeadline(
        nodeRuntime,
        Promise.allSettled([
          sub.unsubscribe(lingering, SUBSCRIBE_TIMEOUT_MS),
          ...(sub.sunsubscribe ? [sub.sunsubscribe(lingering, SUBSCRIBE_TIMEOUT_MS)] : []),
        ]),
        1000,
      );
    }
    sub?.close();
  }

  private open(): Promise<GlideLike> {
    this.client ??= (async () => {
      const config = (this.source as unknown as { config?: Record<string, unknown> }).config;
      if (!config)
        throw new Error('This GLIDE client does not expose its configuration; wake-ups fall back to polling');
      const Client = this.source.constructor as unknown as GlideClass;
      // In the engine's context: its message callback must not run in the first caller's (issue 47).
      const sub = await nodeRuntime.detached(() =>
        Client.createClient({
          ...config,
          pubsubSubscriptions: {
            channelsAndPatterns: {},
            callback: (msg: { channel: unknown; message: unknown }) => {
              const channel = String(msg.channel);
              const message = String(msg.message);
              for (const listener of this.listeners) listener(channel, message);
            },
          },
        }),
      );
      if (this.closed) sub.close();
      return sub;
    })();
    this.client.catch(() => (this.client = undefined));
    return this.client;
  }
}

/** GLIDE's batch classes, from the package the client came from (lib/core/errors/optional-peer.ts). */
function glideBatches(): GlideBatchModule {
  try {
    return require('@valkey/valkey-glide') as GlideBatchModule;
  } catch (error) {
    throw (
      ifPeerMissing(error, '@valkey/valkey-glide') ??
      clientPackageMissing('@valkey/valkey-glide', 'A Valkey GLIDE client')
    );
  }
}
