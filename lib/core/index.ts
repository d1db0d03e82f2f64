// The internal barrel the other layers (nest, testing, observability, terminus, console) import: the
// public core (lib/core/public.ts, the `nestjs-distributed-lock/core` entry) plus the internals they
// need. Not a package entry.
export * from './public';
export * from './options/lock-options';
export { assertKnownNames, describe, printable, quoteKey } from './options/validation';
export { assertLockKey, INVALID_LOCK_KEY, isLockKeyError, lockKeyError } from './options/validation';
export { prepareLockOptions, validateLockOptions, withLockSignal } from './options/validation';
export { resolveEngineOptions } from './options/resolve-engine-options';
export { resolveLockConfig, LOCK_CONFIG_OPTION_NAMES } from './options/resolve-lock-config';
export type { ResolvedLockConfig, ResolvedConnectionOption } from './options/resolve-lock-config';
export type { LockBackend, WakeupChannels } from './engine/lock-backend';
export { ATTEMPT_MARGIN_MS } from './waiting/with-deadline';
export { KeySpace } from './kinds/key-space';
export { assertMultiKeyOptions } from './multi/multi-keys';
export type { ForceReleaseLogOptions } from './inspection/lock-info';
