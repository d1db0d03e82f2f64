// The lock engine's public surface: usable from plain Node, no Nest inside.
export * from './errors';
export * from './options/lock-options';
export { assertKnownNames, describe, printable, quoteKey } from './options/validation';
export { assertLockKey, INVALID_LOCK_KEY, isLockKeyError, lockKeyError } from './options/lock-key';
export { prepareLockOptions, validateLockOptions, withLockSignal } from './options/lock-options-validation';
export { resolveEngineOptions } from './options/resolve-engine-options';
export { resolveLockConfig, LOCK_CONFIG_OPTION_NAMES } from './options/resolve-lock-config';
export type {
  CreateLockEngineOptions,
  ResolvedLockConfig,
  ResolvedConnectionOption,
} from './options/resolve-lock-config';
export type { LockHandle } from './engine/lock-handle';
export { LockEngine } from './engine/lock-engine';
export type { LockEngineReadiness, LockEngineStats } from './engine/engine-status';
export type { LockBackend, WakeupChannels } from './engine/lock-backend';
export type { ConnectionState, LockEventMap } from './engine/lock-events';
export { LockEvents } from './engine/lock-events';
export { ATTEMPT_MARGIN_MS } from './waiting/with-deadline';
export { createLockEngine, openLockEngine } from './topology/create-lock-engine';
export type { RedisConnectionOption } from './redis/redis-connection';
export type { RedlockOption } from './topology/redlock/redlock-options';
export type { RedisClient } from './redis/redis-client';
export { KeySpace } from './kinds/key-space';
export type { MultiLockHandle } from './multi/multi-lock-handle';
export { MAX_MULTI_KEYS, assertMultiKeyOptions } from './multi/multi-keys';
