// The public API of nestjs-distributed-lock: what a Nest application writes. Every name here has an
// entry in docs/API.md (test/architecture/public-api.spec.ts checks it). The engine for plain Node is
// `nestjs-distributed-lock/core`; OpenTelemetry, prom-client and diagnostics_channel helpers are
// `nestjs-distributed-lock/observability`; the testing module `/testing`; the health indicator `/terminus`.
/**
 * The Nest module: `DistributedLockModule`, `DistributedLockService`, the `@DistributedLock` decorator and the errors. Behaviour: docs/API.md.
 * @module nestjs-distributed-lock
 */

// The Nest module, its service, the decorator and the mapping of lock errors per transport.
export { DistributedLockModule } from './nest/distributed-lock.module';
export type {
  DistributedLockModuleAsyncOptions,
  DistributedLockModuleRootOptions,
} from './nest/distributed-lock.module-definition';
export type {
  DistributedLockModuleOptions,
  DistributedLockOptionsFactory,
  RetryAfterOption,
} from './nest/interfaces/distributed-lock-module-options.interface';
export type {
  DistributedLockOptions,
  LockKeyFunction,
} from './nest/interfaces/distributed-lock-options.interface';
export type { DistributedLockHealth } from './nest/interfaces/distributed-lock-health.interface';
export type { DistributedLockTelemetrySetting } from './nest/telemetry.provider';
export { provideLockTelemetry } from './nest/telemetry.provider';
export { DistributedLockService } from './nest/distributed-lock.service';
export { DistributedLock } from './nest/decorators';
export { DistributedLockInterceptor } from './nest/distributed-lock.interceptor';
export { LockedException } from './nest/locked.exception';
export { DistributedLockTransportInterceptor } from './nest/transports/distributed-lock-transport.interceptor';
export type { LockTransport } from './nest/transports/distributed-lock-transport.interceptor';
export type { LockErrorAnswer } from './nest/transports/lock-error-answer';
// The engine's injection token: the LockEngine class Nest provides (override it in tests).
export { LockEngine as DistributedLockEngine } from './core/engine/lock-engine';
export { DISTRIBUTED_LOCK_METADATA } from './nest/distributed-lock.constants';

// Locks, handles, events and errors (the same names as `nestjs-distributed-lock/core`).
export type { LockOptions, ReplicaAckOptions } from './core/options/lock-options';
export { MAX_KEY_BYTES } from './core/options/lock-options';
export { MAX_MULTI_KEYS } from './core/multi/multi-keys';
export { isLockKeyError } from './core/options/validation';
export type { LockHandle } from './core/grant/grant-handle';
export type { MultiLockHandle } from './core/multi/multi-lock-handle';
export type { LockEngineStats } from './core/engine/engine-status';
export type { ConnectionState, LockEventMap } from './core/events/lock-event-map';
// Inspection and force release (docs/CONSOLE.md).
export type { ForceReleaseRecord, LockHolder, LockInfo, LockKind, LockOwner } from './core/options/lock-info';
export * from './core/errors';
