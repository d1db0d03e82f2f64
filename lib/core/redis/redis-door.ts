import type { LockRedisError } from '../errors';
import type { LuaScript, ScriptArg } from './script-library';

/** The client libraries the door speaks, one adapter per family (lib/core/redis/adapters). */
export type ClientFamily = 'ioredis' | 'iovalkey' | 'node-redis' | 'glide';

/** One command's words, as sent: `['WAIT', 1, 500]`. */
export type RedisArgs = readonly (string | number)[];

/** How one script call goes out. */
export interface ScriptSend {
  /** EVAL with the source (after NOSCRIPT) instead of EVALSHA. */
  readonly reload: boolean;
  /** EVALSHA_RO / EVAL_RO (Redis 7): the script only reads. */
  readonly readOnly: boolean;
}

/**
 * THE door to one Redis deployment (a server, a Sentinel-managed master, a Cluster): every command
 * the engine sends goes through one of these, one implementation per client family. Replies come
 * back in one shape whatever the protocol (RESP2 shapes: integers, strings, arrays, nil as null),
 * and errors keep Redis' own text (`NOSCRIPT …`, `NOPERM …`, `MOVED …`).
 */
export interface RedisDoor {
  readonly family: ClientFamily;
  /** A Cluster: one script call may only touch keys of one slot; commands route by key. */
  readonly cluster: boolean;
  /** True when the client prefixes the keys it sends (ioredis' `keyPrefix`): they reach Redis renamed. */
  readonly prefixesKeys?: boolean;
  /** Cluster or Sentinel: failover errors pass within seconds, so scripts retry until their deadline. */
  readonly ridesOutFailover: boolean;
  /** The library opened this connection (a URL or options): close() ends it. A user's client is never closed. */
  readonly owned: boolean;
  /** Connected now (a client the user connected already lets the start-up checks run at once). */
  readonly ready: boolean;
  /** What the topology is called in logs and errors: `Redis`, `Redis Cluster`. */
  readonly label: string;
  /** Runs a script, routed by its first key on a Cluster; NOSCRIPT comes back as an error starting with `NOSCRIPT`. */
  script(
    script: LuaScript,
    keys: readonly string[],
    args: readonly ScriptArg[],
    send: ScriptSend,
  ): Promise<unknown>;
  /** One plain command (PING, INFO, WAIT) on the node that owns `routeKey`, or any node without one. */
  command(args: RedisArgs, routeKey?: string): Promise<unknown>;
  /**
   * MULTI/EXEC of `commands` (keys of one slot, `routeKey`'s) on its node. Resolves with one reply per
   * command, an Error in the place of each command that failed; rejects when the transaction as a
   * whole was refused (EXECABORT) or the connection failed.
   */
  transaction(commands: readonly RedisArgs[], routeKey: string): Promise<unknown[]>;
  /** A new connection for wake-ups (a duplicate; SSUBSCRIBE on a Cluster), ended by its close(). */
  subscriber(): WakeupSubscriber;
  /**
   * Hears the connection go up or down, with the reason; repeats are the caller's to drop (see
   * watchConnection). Every connection made (the first and each reconnect; on a Cluster, also each
   * node's) is an `up`: the server behind it may have restarted or failed over. Families without
   * connection events report nothing: their failures show in the commands that fail.
   */
  watch(listener: (state: 'up' | 'down', reason?: string) => void): void;
  /** The error that made a connection the library owns give up for good (credentials, certificate). */
  fatalError(): LockRedisError | undefined;
  /** Closes the connection when the library opened it; a user's client is left as it is. */
  close(): Promise<void>;
}

/** The connection wake-ups arrive on (one per engine, per RedLock node). */
export interface WakeupSubscriber {
  /** SUBSCRIBE, or SSUBSCRIBE when `sharded` (routed to the shard that owns the channel). Resolves once confirmed. */
  subscribe(channel: string, sharded: boolean): Promise<void>;
  /** The matching UNSUBSCRIBE / SUNSUBSCRIBE. */
  unsubscribe(channel: string, sharded: boolean): Promise<void>;
  /** Every message of every channel and shard channel, once per listener. */
  onMessage(listener: (channel: string, message: string) => void): void;
  /**
   * Present when the connection does not restore its subscriptions after a reconnect: `listener`
   * runs after each reconnect (not the first connect) so the hub subscribes again.
   */
  onReconnect?(listener: () => void): void;
  /** Unsubscribes from everything and ends the connection. */
  close(): Promise<void>;
}
