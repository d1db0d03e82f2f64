import type { LockHandle } from '../core/lock-handle';
import type { LockOptions } from '../core/lock-options';
import type { ResolvedModuleOptions } from './module-options';

/** What a decorated method and the interceptor need from a DistributedLockService. */
export interface RegisteredLockService {
  acquire(key: string, options?: LockOptions): Promise<LockHandle>;
  tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null>;
  runInLock<T>(handle: LockHandle, fn: () => T): T;
  readonly settings: ResolvedModuleOptions;
}

/**
 * Where decorated methods find their lock service at call time. The decorator runs when the class
 * is defined, long before Nest creates anything, so it cannot be injected (same approach as
 * nestjs-cls). Each service maps the instances that carry decorated methods in its own app to
 * itself (so two apps in one process, e.g. two replicas in a test, each use their own Redis
 * connection); any other `this` (request-scoped providers, objects built by hand) gets the most
 * recently initialised service.
 */
class LockServiceRegistry {
  private readonly owners = new WeakMap<object, RegisteredLockService>();
  private readonly active: RegisteredLockService[] = [];

  /** Called from the service's onModuleInit. */
  register(service: RegisteredLockService): void {
    if (!this.active.includes(service)) this.active.push(service);
  }

  /** Called when the service shuts down: unbound calls stop falling back to it. */
  unregister(service: RegisteredLockService): void {
    const at = this.active.indexOf(service);
    if (at >= 0) this.active.splice(at, 1);
  }

  /** Binds a provider/controller instance with decorated methods to the service of its app. */
  bind(instance: object, service: RegisteredLockService): void {
    this.owners.set(instance, service);
  }

  /** The service for a decorated call on `thisArg`, or undefined when none is initialised. */
  resolve(thisArg: unknown): RegisteredLockService | undefined {
    if (typeof thisArg === 'object' && thisArg !== null) {
      // A closed service stays bound: its engine then says "closed", which is the truth.
      const bound = this.owners.get(thisArg);
      if (bound) return bound;
    }
    return this.active[this.active.length - 1];
  }
}

/** The process-wide registry of initialised lock services. */
export const lockServiceRegistry = new LockServiceRegistry();
