import type { LockHandle, LockOptions, MultiLockHandle } from '../core';
import type { DistributedLockSettings } from './module-options';

/** What a decorated method and the interceptor need from a DistributedLockService. */
export interface RegisteredLockService {
  acquire(key: string | readonly string[], options?: LockOptions): Promise<LockHandle | MultiLockHandle>;
  tryAcquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<LockHandle | MultiLockHandle | null>;
  runInLock<T>(handle: LockHandle | MultiLockHandle, fn: () => T): T;
  hold<T>(handle: LockHandle | MultiLockHandle, fn: () => Promise<T> | T): Promise<T>;
  readonly settings: DistributedLockSettings;
}

/**
 * The fallback for decorated methods whose `this` Nest did not build (objects made by hand): the
 * lock service created most recently and not yet shut down. Instances Nest creates get their own
 * app's service by property injection (see the decorator), so two apps in one process stay apart.
 */
class LockServiceRegistry {
  private readonly active: RegisteredLockService[] = [];

  /** Called when a service is created. */
  register(service: RegisteredLockService): void {
    if (!this.active.includes(service)) this.active.push(service);
  }

  /** Called when the service shuts down: unbound calls stop falling back to it. */
  unregister(service: RegisteredLockService): void {
    const at = this.active.indexOf(service);
    if (at >= 0) this.active.splice(at, 1);
  }

  /** The most recent live service, or undefined. */
  latest(): RegisteredLockService | undefined {
    return this.active[this.active.length - 1];
  }
}

/** The process-wide fallback registry of lock services. */
export const lockServiceRegistry = new LockServiceRegistry();
