// The Nest layer's public surface.
export * from './interfaces';
export * from './decorators';
export { DistributedLockModule } from './distributed-lock.module';
export { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition';
export type {
  DistributedLockModuleRootOptions,
  DistributedLockModuleAsyncOptions,
} from './distributed-lock.module-definition';
export { DistributedLockService } from './distributed-lock.service';
export { DistributedLockInterceptor } from './distributed-lock.interceptor';
export { DistributedLockTransportInterceptor } from './transports/distributed-lock-transport.interceptor';
export type { LockTransport } from './transports/distributed-lock-transport.interceptor';
export type { LockErrorAnswer, LockErrorCode } from './transports/lock-error-answer';
export { LockedException } from './locked.exception';
export type { LockedExceptionOptions } from './locked.exception';
export { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants';
export { DEFAULT_BUSY_STATUS } from './module-options';
export { DistributedLockEngine } from './distributed-lock-engine';
export { DISTRIBUTED_LOCK_SETTINGS } from './distributed-lock.module-definition';
export type { DistributedLockSettings } from './module-options';
export { DEFAULT_DRAIN_MS } from './module-options';
export {
  DistributedLockTelemetry,
  DISTRIBUTED_LOCK_TELEMETRY,
  provideLockTelemetry,
} from './telemetry.provider';
export type { DistributedLockTelemetrySetting } from './telemetry.provider';
