// `nestjs-distributed-lock/core`: the lock engine for plain Node (no Nest inside) — what a user writes.
// lib/core/index.ts is the internal barrel the other layers use; it is not a package entry.
/**
 * The lock engine for plain Node, without Nest: `createLockEngine` and `LockEngine`.
 * @module nestjs-distributed-lock/core
 */
export { createLockEngine } from './topology/create-lock-engine';
export { LockEngine } from './engine/lock-engine';
export type { CreateLockEngineOptions } from './topology/resolve-lock-config';
export type { LockEngineOptions, LockOptions, ReplicaAckOptions } from './options/lock-options';
export { MAX_DURATION_MS, MAX_KEY_BYTES } from './options/lock-options';
export { MAX_MULTI_KEYS } from './multi/multi-keys';
export { isLockKeyError } from './options/validation';
export type { LockHandle } from './grant/grant-handle';
export type { MultiLockHandle } from './multi/multi-lock-handle';
export type { LockEngineStats } from './engine/engine-status';
export { LockEvents } from './events/lock-events';
export type { ConnectionState, LockEventMap } from './events/lock-event-map';
export type {
  ForceReleaseLogOptions,
  ForceReleaseOptions,
  ForceReleaseRecord,
  InspectLockOptions,
  ListLocksOptions,
  ListLocksResult,
  LockHolder,
  LockInfo,
  LockKind,
  LockOwner,
} from './options/lock-info';
export * from './errors';
