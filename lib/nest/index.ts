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
export { LockedException } from './locked.exception';
export type { LockedExceptionOptions } from './locked.exception';
export { DISTRIBUTED_LOCK_METADATA } from './distributed-lock.constants';
export { DEFAULT_BUSY_STATUS } from './module-options';
