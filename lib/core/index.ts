// The internal barrel the other layers (nest, testing, observability, terminus, console) import: the
// public core (lib/core/public.ts, the `nestjs-distributed-lock/core` entry) plus the internals they
// need. Not a package entry.
export * from './public';
export * from './options/lock-options';
export {
  assertKnownNames,
  assertLockKey,
  describe,
  INVALID_LOCK_KEY,
  isLockKeyError,
  lockKeyError,
  prepareLockOptions,
  printable,
  quoteKey,
  validateLockOptions,
  withLockSignal,
} from './options/validation';
// Internal: the Nest layer's engine factory and the option types its module options name.
export { openLockEngine } from './topology/create-lock-engine';
export type { LockEngineReadiness } from './engine/engine-status';
export type { RedisConnectionOption } from './redis/redis-connection';
export type { RedlockOption } from './topology/redlock/redlock-options';
export { resolveEngineOptions } from './options/resolve-engine-options';
export { resolveLockConfig, LOCK_CONFIG_OPTION_NAMES } from './topology/resolve-lock-config';
export type { ResolvedLockConfig, ResolvedConnectionOption } from './topology/resolve-lock-config';
export type { LockBackend, WakeupChannels } from './engine/lock-backend';
export { ATTEMPT_MARGIN_MS } from './time/with-deadline';
export { KeySpace } from './kinds/lock-kind';
export { assertMultiKeyOptions } from './multi/multi-keys';
export type { ForceReleaseLogOptions } from './options/lock-info';
