import { Inject, Injectable, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { LockError } from '../core/errors';
import type { LockEngine } from '../core/lock-engine';
import type { LockHandle } from '../core/lock-handle';
import type { LockEvents } from '../core/lock-events';
import type { LockOptions } from '../core/lock-options';
import { LOCK_ENGINE_OVERRIDE } from './distributed-lock.constants';
import { DISTRIBUTED_LOCK_MODULE_OPTIONS } from './distributed-lock.module-definition';
import { SERVICE_CLOSED_MESSAGE } from './distributed-lock.messages';
import type { DistributedLockHealth, DistributedLockModuleOptions } from './interfaces';
import { lockServiceRegistry, RegisteredLockService } from './lock-service-registry';
import { ResolvedModuleOptions, resolveModuleOptions } from './module-options';
import { closeOpened, OpenedLockEngine, openLockEngine, pingAll } from './open-lock-engine';

/**
 * Distributed locks on Redis, injectable. A thin Nest face over the core LockEngine: built from the
 * module options (validated before anything connects), closed in onApplicationShutdown.
 */
@Injectable()
export class DistributedLockService implements RegisteredLockService, OnModuleInit, OnApplicationShutdown {
  /** The validated module options (engine part, connection, HTTP settings). */
  readonly settings: ResolvedModuleOptions;
  private opened?: OpenedLockEngine;
  private closing?: Promise<void>;

  constructor(
    @Inject(DISTRIBUTED_LOCK_MODULE_OPTIONS) options: DistributedLockModuleOptions,
    // TEMPORARY SEAM (issue 12, nestjs-distributed-lock/testing): a pre-built engine, used instead
    // of one built from `redis` / `redlock`. Becomes the LOCK_ENGINE provider token in the rewrite.
    @Optional() @Inject(LOCK_ENGINE_OVERRIDE) private readonly engineOverride?: LockEngine,
  ) {
    // Validate now, so bad options fail the start-up; connect in onModuleInit (or on first use,
    // e.g. in a testing module that was never initialised). Connecting here would leak the
    // connection whenever another provider fails to instantiate, since nobody then calls close().
    this.settings = resolveModuleOptions(options, engineOverride === undefined);
  }

  /** Takes the lock, waiting up to `waitMs`; rejects with LockNotAcquiredError when it stays busy. */
  async acquire(key: string, options?: LockOptions): Promise<LockHandle> {
    return this.engine.acquire(key, options);
  }

  /** Like acquire, but resolves null when busy (default `waitMs` 0: a single attempt). */
  async tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null> {
    return this.engine.tryAcquire(key, options);
  }

  /** Runs `fn` holding the lock, inside its critical section (nested calls re-enter); always releases. */
  async using<T>(
    key: string,
    options: LockOptions | undefined,
    fn: (lock: LockHandle) => Promise<T> | T,
  ): Promise<T> {
    return this.engine.using(key, options, fn);
  }

  /** Runs `fn` inside the critical section of a handle from acquire(): calls in it re-enter that lock. */
  runInLock<T>(handle: LockHandle, fn: () => T): T {
    return this.engine.runInLock(handle, fn);
  }

  /** The lock this async context holds: for `key`, or the innermost one. */
  current(key?: string): LockHandle | undefined {
    return this.opened?.engine.current(key);
  }

  /** Observability events: acquired, notAcquired, contended, released, renewed, lost. */
  get events(): LockEvents {
    return this.engine.events;
  }

  /** Held locks, local waiters and subscribed channels of this service. */
  stats(): ReturnType<LockEngine['stats']> {
    return this.engine.stats();
  }

  /** Health for a readiness probe: PING round trip plus held and waiting locks (no @nestjs/terminus needed). */
  async health(): Promise<DistributedLockHealth> {
    if (this.closing)
      return { status: 'down', redis: null, held: 0, waiting: 0, error: SERVICE_CLOSED_MESSAGE };
    const stats = this.stats();
    const base = { held: stats.held, waiting: stats.waitingLocks };
    try {
      const { pingable, engine } = this.open();
      const redis = await pingAll(pingable, engine.options.commandTimeoutMs);
      // RedLock built from URLs has no connection here to PING: report "not measured".
      return { status: 'up', redis: pingable.length > 0 ? redis : null, ...base };
    } catch (err) {
      return {
        status: 'down',
        redis: null,
        ...base,
        error: err instanceof Error ? err.message : String(err),
      };
    }
  }

  /** @internal Connects, and makes decorated methods find this service. */
  onModuleInit(): void {
    this.open();
    lockServiceRegistry.register(this);
  }

  /** @internal Releases held locks, stops timers, unsubscribes, closes the connections the module opened. */
  onApplicationShutdown(): Promise<void> {
    lockServiceRegistry.unregister(this);
    const opened = this.opened;
    this.closing ??= opened ? closeOpened(opened, opened.engine.options.commandTimeoutMs) : Promise.resolve();
    return this.closing;
  }

  private get engine(): LockEngine {
    return this.open().engine;
  }

  private open(): OpenedLockEngine {
    if (!this.opened) {
      if (this.closing) throw new LockError(SERVICE_CLOSED_MESSAGE);
      this.opened = this.engineOverride
        ? { engine: this.engineOverride, pingable: [], owned: [] } // TEMPORARY SEAM (issue 12)
        : openLockEngine(this.settings);
    }
    return this.opened;
  }
}
