import { LockEngine } from '../engine/lock-engine';
import { CreateLockEngineOptions, resolveLockConfig, ResolvedLockConfig } from './resolve-lock-config';
import { openDoor } from '../redis/redis-connection';
import { RedisBackend } from './redis-backend';
import { RedlockBackend } from './redlock/redlock-backend';

/** Builds a lock engine for plain Node use. Validates everything before opening any connection. */
export function createLockEngine(options: CreateLockEngineOptions): LockEngine {
  return openLockEngine(resolveLockConfig(options));
}

/**
 * Builds the engine and its backend from resolved options: RedLock over independent masters, or
 * one Redis deployment (standalone, Sentinel or Cluster). Connections it opens connect lazily.
 */
export function openLockEngine(config: ResolvedLockConfig): LockEngine {
  const { engine, connection } = config;
  if (connection.redlock !== undefined) {
    return new LockEngine(new RedlockBackend(connection.redlock, engine), engine);
  }
  return new LockEngine(new RedisBackend(openDoor(connection.redis), engine), engine);
}
