/** Reflect-metadata key under which @DistributedLock() stores its options on the wrapped method. */
export const DISTRIBUTED_LOCK_METADATA = 'nestjs-distributed-lock:options';

/**
 * TEMPORARY SEAM for nestjs-distributed-lock/testing (issue 12): when provided, DistributedLockService
 * uses this pre-built LockEngine instead of building one from `redis` / `redlock` (and closes it
 * at shutdown). To be replaced by the LOCK_ENGINE provider token of the Nest-layer rewrite.
 */
export const LOCK_ENGINE_OVERRIDE = Symbol('nestjs-distributed-lock:engine-override');
