/** Reflect-metadata key under which @DistributedLock() stores its options on the wrapped method. */
export const DISTRIBUTED_LOCK_METADATA = 'nestjs-distributed-lock:options';
