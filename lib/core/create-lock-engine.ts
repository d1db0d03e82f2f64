import { LockEngine } from './lock-engine';
import { LockEngineOptions } from './lock-options';
import { RedisBackend } from './redis-backend';
import { RedisConnectionOption, resolveConnection } from './redis-connection';
import { assertKnownNames, resolveEngineOptions } from './validation';

/** Options of createLockEngine: where Redis is, plus the engine tuning of LockEngineOptions. */
export interface CreateLockEngineOptions extends LockEngineOptions {
  /** A URL, ioredis options (standalone or Sentinel), or an existing ioredis Redis / Cluster (never closed by us). */
  redis: RedisConnectionOption;
}

const ENGINE_OPTION_NAMES = ['redis', 'keyPrefix', 'defaults', 'watchdogLeaseMs', 'renewEveryMs', 'backoff', 'fenceTtlMs', 'commandTimeoutMs'];

/** Builds a lock engine for plain Node use (the Nest module calls this too). Validates before connecting. */
export function createLockEngine(options: CreateLockEngineOptions): LockEngine {
  if (typeof options !== 'object' || options === null) throw new TypeError('createLockEngine needs an options object');
  assertKnownNames(options as unknown as Record<string, unknown>, ENGINE_OPTION_NAMES, 'lock engine options');
  if (options.redis === undefined) throw new TypeError('The "redis" option is required (a URL, ioredis options or a client)');
  const { redis, ...engineOptions } = options;
  const resolved = resolveEngineOptions(engineOptions);
  const backend = new RedisBackend(resolveConnection(redis), resolved);
  return new LockEngine(backend, engineOptions);
}
