import { LockEngine } from './lock-engine';
import { LockEngineOptions } from './lock-options';
import { RedisBackend } from './redis-backend';
import { RedisConnectionOption, resolveConnection } from './redis-connection';
import { RedlockBackend } from './redlock/redlock-backend';
import { RedlockOption, resolveRedlockOptions } from './redlock/redlock-options';
import { assertKnownNames, resolveEngineOptions } from './validation';

/** Options of createLockEngine: where Redis is (`redis` or `redlock`), plus the engine tuning of LockEngineOptions. */
export interface CreateLockEngineOptions extends LockEngineOptions {
  /** A URL, ioredis options (standalone or Sentinel), or an existing ioredis Redis / Cluster (never closed by us). */
  redis?: RedisConnectionOption;
  /** Instead of `redis`: independent masters, locked by RedLock quorum (see docs/TOPOLOGIES.md). */
  redlock?: RedlockOption;
}

const ENGINE_OPTION_NAMES = [
  'redis',
  'redlock',
  'keyPrefix',
  'defaults',
  'watchdogLeaseMs',
  'renewEveryMs',
  'backoff',
  'fenceTtlMs',
  'commandTimeoutMs',
  'replicas',
];

/** Builds a lock engine for plain Node use (the Nest module calls this too). Validates before connecting. */
export function createLockEngine(options: CreateLockEngineOptions): LockEngine {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('createLockEngine needs an options object');
  assertKnownNames(options as unknown as Record<string, unknown>, ENGINE_OPTION_NAMES, 'lock engine options');
  const { redis, redlock, ...engineOptions } = options;
  if (redis !== undefined && redlock !== undefined) {
    throw new TypeError('Give either "redis" (one deployment) or "redlock" (independent masters), not both');
  }
  const resolved = resolveEngineOptions(engineOptions);
  if (redlock !== undefined) {
    if (resolved.replicas)
      throw new TypeError(
        '"replicas" (WAIT) does not apply to "redlock": each RedLock node is its own master',
      );
    const backend = new RedlockBackend(resolveRedlockOptions(redlock, resolved.commandTimeoutMs), resolved);
    return new LockEngine(backend, engineOptions);
  }
  if (redis === undefined) {
    throw new TypeError(
      'The "redis" option is required (a URL, ioredis options or a client), or "redlock" for RedLock',
    );
  }
  const backend = new RedisBackend(resolveConnection(redis), resolved);
  return new LockEngine(backend, engineOptions);
}
