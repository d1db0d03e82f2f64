import Redis, { RedisOptions } from 'ioredis';
import { describe } from './validation';
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
  if (typeof option === 'string') {
    if (!/^rediss?:\/\//.test(option)) {
      throw new TypeError(`${name} must be a redis:// or rediss:// URL, got ${describe(option)}`);
    }
    return { client: new Redis(option, CLIENT_DEFAULTS), owned: true };
  }
  if (typeof option === 'object' && option !== null && !Array.isArray(option)) {
    return { client: new Redis({ ...CLIENT_DEFAULTS, ...option }), owned: true };
  }
  throw new TypeError(`${name} must be a URL, ioredis options, or an ioredis Redis/Cluster instance, got ${describe(option)}`);
}

/** For connections we open: fail queued commands after a few reconnect attempts instead of 20. */
const CLIENT_DEFAULTS: RedisOptions = { maxRetriesPerRequest: 3 };

/** A dedicated subscriber connection for wake-ups, with the same target and options as `client`. */
export function duplicateForSubscriber(client: RedisClient): RedisClient {
  return isCluster(client) ? client.duplicate() : client.duplicate();
}
