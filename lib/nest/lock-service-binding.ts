import type { DistributedLockService } from './distributed-lock.service';

/**
 * What a decorated method needs from its lock service: the public `using()`, nothing else, so a
 * test's `overrideProvider(DistributedLockService).useValue(fake)` works with a fake of the public API.
 */
export type LockServiceApi = Pick<DistributedLockService, 'using'>;

/** Where Nest injects the app's DistributedLockService into instances with decorated methods. */
export const LOCK_SERVICE_PROPERTY = Symbol('nestjs-distributed-lock:service');

// Instances Nest did not build through their class (useFactory / useValue providers) get their
// module's service at start-up from LockServiceBinder; a WeakMap, so the instance is not touched.
const bound = new WeakMap<object, LockServiceApi>();

/** Binds the lock service visible from the instance's module to an instance Nest did not inject. */
export function bindLockService(instance: object, service: LockServiceApi): void {
  bound.set(instance, service);
}

/**
 * The lock service of the app that built `instance`: injected by Nest, or bound at start-up.
 * Undefined for objects built outside Nest's container (there is no process-wide fallback: with
 * two apps in one process, a guess would lock on the other app's Redis).
 */
export function lockServiceOf(instance: unknown): LockServiceApi | undefined {
  if (typeof instance !== 'object' || instance === null) return undefined;
  return (
    (instance as Record<symbol, LockServiceApi | undefined>)[LOCK_SERVICE_PROPERTY] ?? bound.get(instance)
  );
}
