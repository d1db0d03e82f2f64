// The lock engine's public surface: usable from plain Node, no Nest inside.
export * from './errors';
export * from './lock-options';
export type { LockHandle } from './lock-handle';
export { LockEngine } from './lock-engine';
export type { LockBackend } from './lock-engine';
export type { LockEventMap } from './lock-events';
export { LockEvents } from './lock-events';
export { createLockEngine } from './create-lock-engine';
export type { CreateLockEngineOptions } from './create-lock-engine';
export type { RedisConnectionOption } from './redis-connection';
export type { RedlockOption } from './redlock/redlock-options';
export type { RedisClient } from './redis-client';
export { KeySpace } from './key-space';
