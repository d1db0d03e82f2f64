import Redis, { RedisOptions } from 'ioredis';
import { LockRedisError } from '../errors';
import { describe, printable } from '../options/validation';
import { withDeadline } from '../waiting/with-deadline';
import { isCluster, isRedisClient, RedisClient } from './redis-client';

/** How to reach Redis: a URL, ioredis options (standalone or Sentinel), or an existing Redis/Cluster. */
export type RedisConnectionOption = string | RedisOptions | RedisClient;

/** A connection and whether the engine opened it (and so must close it). */
export interface ResolvedConnection {
  client: RedisClient;
  owned: boolean;
}

/** Turns the `redis` option into a client; a client passed in is used as is and never closed by us. */
export function resolveConnection(option: RedisConnectionOption, name = 'redis'): ResolvedConnection {
  if (isRedisClient(option)) return { client: option, owned: false };
  const resolved = openConnection(option, name);
  // Connection trouble reaches callers as LockRedisError from the commands it fails; without a
  // listener ioredis would also print every reconnect error of a client we own to the console.
  resolved.client.on('error', () => undefined);
  stopOnFatalErrors(resolved.client);
  return resolved;
}

const fatalErrors = new WeakMap<object, LockRedisError>();

/**
 * The error that made a connection we own give up for good (wrong password, unknown user, rejected
 * TLS certificate), or undefined. Commands and health checks report it instead of ioredis' generic
 * "Connection is closed" or "max retries per request".
 */
export function fatalConnectionError(client: RedisClient): LockRedisError | undefined {
  return fatalErrors.get(client);
}

/**
 * Retrying cannot fix credentials or a certificate: ioredis would reconnect and authenticate again
 * about twice a second forever. On such an error the connection is closed once, and the reason kept.
 */
function stopOnFatalErrors(client: RedisClient): void {
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
 * Refuses anything that is not a redis:// or rediss:// URL, an options object or a client, before
 * anything connects. `name` names the option in the message (`redis`, `redlock[2]`).
 */
export function assertConnectionOption(option: unknown, name = 'redis', clients = 'Redis/Cluster'): void {
  if (isRedisClient(option)) return;
  if (typeof option === 'string') {
    if (!REDIS_URL.test(option)) {
      throw new TypeError(`${name} must be a redis:// or rediss:// URL, got ${describe(option)}`);
    }
    return;
  }
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new TypeError(
      `${name} must be a URL, ioredis options, or an ioredis ${clients} instance, got ${describe(option)}`,
    );
  }
}

const REDIS_URL = /^rediss?:\/\//;

function openConnection(
  option: Exclude<RedisConnectionOption, RedisClient>,
  name: string,
): ResolvedConnection {
  assertConnectionOption(option, name);
  // lazyConnect: no socket until the first command, so building an engine that is never used (a
  // Nest app whose start-up fails later) leaves nothing open.
  if (typeof option === 'string') {
    return { client: new Redis(option, { ...CLIENT_DEFAULTS, lazyConnect: true }), owned: true };
  }
  const defaults = option.sentinels ? { ...CLIENT_DEFAULTS, ...SENTINEL_DEFAULTS } : CLIENT_DEFAULTS;
  return { client: new Redis({ ...defaults, lazyConnect: true, ...option }), owned: true };
}

/**
 * How long ioredis waits, after ending a socket on disconnect(), for it to close before destroying
 * it (its default is 2 s). That wait is a timer only the socket's 'close' event clears: a socket that
 * had already closed (Redis down at close()) never emits it again, and the timer kept the process
 * alive 2 s after close(). Set on the connections this library opens.
 */
const DISCONNECT_TIMEOUT_MS = 200;

/** For connections we open: fail queued commands after a few reconnect attempts instead of 20. */
const CLIENT_DEFAULTS: RedisOptions = { maxRetriesPerRequest: 3, disconnectTimeout: DISCONNECT_TIMEOUT_MS };

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
 * On a Cluster it uses ioredis' sharded subscribers: one connection per master that serves a
 * subscribed slot, moved by ioredis when the slot's owner changes (failover, MOVED, migration).
 * Elsewhere ioredis' own resubscription after a reconnect is off: it leaves its SUBSCRIBE promises
 * unhandled, so a close before Redis answers them was an unhandled rejection in the user's process.
 * The WakeupHub resubscribes such a connection itself.
 */
export function duplicateForSubscriber(client: RedisClient): RedisClient {
  const sub = isCluster(client)
    ? client.duplicate([], { shardedSubscribers: true })
    : client.duplicate({ autoResubscribe: false, disconnectTimeout: DISCONNECT_TIMEOUT_MS });
  stopOnFatalErrors(sub);
  return sub;
}

/**
 * QUIT with a deadline, then disconnect: a dead or frozen server must not hang shutdown, and a
 * connection that drops before QUIT is answered ("Connection is closed.") must not fail it.
 */
export async function closeConnection(client: RedisClient, graceMs = 1000): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    await withDeadline(
      client.quit().catch(() => undefined),
      graceMs,
    );
  }
  client.disconnect();
}
