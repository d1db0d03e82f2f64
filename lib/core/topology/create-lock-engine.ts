import { LockEngine } from '../engine/lock-engine';
import { CreateLockEngineOptions, resolveLockConfig, ResolvedLockConfig } from './resolve-lock-config';
import { nodeEnvironment, type LockEnvironment } from './lock-environment';
import { RedisBackend } from './redis-backend';
import { RedlockBackend } from './redlock/redlock-backend';

/** Builds a lock engine for plain Node use. Validates everything before opening any connection. */
export function createLockEngine(options: CreateLockEngineOptions): LockEngine {
  return openLockEngine(resolveLockConfig(options));
}

/**
 * Builds the engine and its backend from resolved options: RedLock over independent masters, or
 * one Redis deployment (standalone, Sentinel or Cluster). Connections it opens connect lazily.
 * Everything outside the engine (clocks, timers, randomness, the doors to Redis) comes from `env`.
 */
export function openLockEngine(
  config: ResolvedLockConfig,
  env: LockEnvironment = nodeEnvironment,
): LockEngine {
  const { engine, connection } = config;
  const backend =
    connection.redlock !== undefined
      ? new RedlockBackend(connection.redlock, engine, env)
      : new RedisBackend(env.openDoor(connection.redis, 'redis'), engine, env.runtime);
  return new LockEngine(backend, engine, env.runtime);
}
