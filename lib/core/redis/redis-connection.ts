import { describe } from '../errors/message-text';
import { openIoredis, type RedisOptions } from './adapters/ioredis-door';
import { doorForClient, isRedisClient, type RedisClient } from './redis-client';
import type { RedisDoor } from './redis-door';

/**
 * How to reach Redis: a URL or ioredis options (standalone or Sentinel; opened with ioredis, the
 * default), or a client the user already has (see RedisClient).
 */
export type RedisConnectionOption = string | RedisOptions | RedisClient;

/**
 * Turns the `redis` option into the door every command goes through. A client passed in is used as
 * is and never closed by the library; a URL or options open an ioredis connection (owned: closed
 * with the engine), loading ioredis only now.
 */
export function openDoor(option: RedisConnectionOption, name = 'redis'): RedisDoor {
  if (isRedisClient(option)) return doorForClient(option);
  assertConnectionOption(option, name);
  return openIoredis(option as string | RedisOptions);
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
      `${name} must be a URL, ioredis options, or a client (ioredis or iovalkey ${clients}, node-redis, ` +
        `Valkey GLIDE), got ${describe(option)}`,
    );
  }
}

const REDIS_URL = /^rediss?:\/\//;
