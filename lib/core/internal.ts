// What the entries above the core (nest, console, cli, terminus, testing) use of it beyond its public
// surface (lib/core/public.ts): option checks, message text, the engine factory and the resolved
// option types. Not a package entry. A file that imports it says why in its first comment, and the
// layer rules (.dependency-cruiser.cjs) hold it to that.
export * from './options/lock-options';
export {
  assertKnownNames,
  assertLockKey,
  INVALID_LOCK_KEY,
  isLockKeyError,
  lockKeyError,
  prepareLockOptions,
  validateLockOptions,
  withLockSignal,
} from './options/validation';
export { describe, printable, quoteKey } from './errors/message-text';
// The loading of optional peers (errors/optional-peer.ts): every entry that loads one.
export { clientPackageMissing, ifPeerMissing, OptionalPeerMissingError } from './errors/optional-peer';
// Internal: the Nest layer's engine factory and the option types its module options name.
export { openLockEngine } from './topology/create-lock-engine';
export type { LockEngineReadiness } from './engine/engine-status';
export type { RedisConnectionOption } from './redis/redis-connection';
export type { RedlockOption } from './topology/redlock/redlock-options';
export { resolveEngineOptions } from './options/resolve-engine-options';
export { resolveLockConfig, LOCK_CONFIG_OPTION_NAMES } from './topology/resolve-lock-config';
export type { ResolvedLockConfig, ResolvedConnectionOption } from './topology/resolve-lock-config';
export type { LockBackend } from './engine/lock-backend';
export type { WakeupChannels } from './waiting/wakeup-hub';
// The one script path, for scripts an entry ships itself (the Redis fenced store's).
export { RedisGateway, toLockRedisError } from './redis/redis-gateway';
export { scriptOf } from './redis/script-library';
export { doorForClient, type RedisClient } from './redis/redis-client';
export { ATTEMPT_MARGIN_MS } from './runtime/with-deadline';
// The runtime: the fenced store's gateway runs on the production one.
export { nodeRuntime, type Runtime } from './runtime/runtime';
export { KeySpace } from './kinds/key-space';
export { assertMultiKeyOptions } from './multi/multi-keys';
export type { ForceReleaseLogOptions } from './options/lock-info';
