import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import type {
  ForceReleaseLogOptions,
  ForceReleaseOptions,
  ForceReleaseRecord,
  InspectLockOptions,
  ListLocksOptions,
  ListLocksResult,
  LockInfo,
  ConnectionState,
  LockEngineStats,
  LockEvents,
  LockHandle,
  LockOptions,
  MultiLockHandle,
} from '../core';
import { LockEngine } from '../core';
import { DISTRIBUTED_LOCK_SETTINGS } from './distributed-lock.module-definition';
import { SERVICE_CLOSED_MESSAGE } from './distributed-lock.messages';
import type { DistributedLockHealth } from './interfaces';
import type { DistributedLockSettings } from './module-options';
import { logLostLocks } from './lost-locks-log';

/**
 * Distributed locks on Redis, injectable: the Nest face of the lock engine Nest provides (the
 * LockEngine class is the token, exported as DistributedLockEngine). It adds what Nest needs:
 * logging of connection changes, refusals and force releases through Nest's Logger, health() for
 * readiness probes, and the engine's close in onApplicationShutdown. The calls forward to the
 * engine; they are declared here (not derived from LockEngine) because subclasses override them as
 * methods, which a type derived from another class cannot offer.
 */
@Injectable()
export class DistributedLockService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private closing?: Promise<void>;
  private readonly logger = new Logger('DistributedLock');
  private wasDown = false;
  private stopLostLocksLog?: () => void;
  /** What Redis refuses this service now (the engine's `refusal` events), for health(). */
  private readonly refused = new Map<string, string>();

  constructor(
    @Inject(LockEngine) private readonly engine: LockEngine,
    /** The module options, resolved once. */
    @Inject(DISTRIBUTED_LOCK_SETTINGS) readonly settings: DistributedLockSettings,
  ) {}

  /** Takes the lock, waiting up to `waitMs`; rejects with LockNotAcquiredError when it stays busy. */
  acquire(key: string, options?: LockOptions): Promise<LockHandle>;
  /** Takes every key, all or none, deadlock-free whatever order callers name them in. */
  acquire(keys: readonly string[], options?: LockOptions): Promise<MultiLockHandle>;
  acquire(key: string | readonly string[], options?: LockOptions): Promise<LockHandle | MultiLockHandle>;
  acquire(key: string | readonly string[], options?: LockOptions): Promise<LockHandle | MultiLockHandle> {
    return this.engine.acquire(key, options);
  }

  /** Like acquire, but resolves null when busy (default `waitMs` 0: a single attempt). */
  tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null>;
  tryAcquire(keys: readonly string[], options?: LockOptions): Promise<MultiLockHandle | null>;
  tryAcquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<LockHandle | MultiLockHandle | null>;
  tryAcquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<LockHandle | MultiLockHandle | null> {
    return this.engine.tryAcquire(key, options);
  }

  /** Runs `fn` holding the lock, inside its critical section (nested calls re-enter); always releases. */
  using<T>(
    key: string,
    options: LockOptions | undefined,
    fn: (lock: LockHandle) => Promise<T> | T,
  ): Promise<T>;
  /** Runs `fn` holding every key (all or none), inside the critical section of each. */
  using<T>(
    keys: readonly string[],
    options: LockOptions | undefined,
    fn: (lock: MultiLockHandle) => Promise<T> | T,
  ): Promise<T>;
  async using<T>(
    key: string | readonly string[],
    options: LockOptions | undefined,
    fn: ((lock: LockHandle) => Promise<T> | T) | ((lock: MultiLockHandle) => Promise<T> | T),
  ): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError('using() needs a function as its third argument');
    // Through this.acquire(), so a subclass that overrides acquire() sees decorated calls too.
    const handle = await this.acquire(key, options);
    return this.engine.hold(handle, () =>
      (fn as (lock: LockHandle | MultiLockHandle) => Promise<T> | T)(handle),
    );
  }

  /** Runs `fn` inside the critical section of a handle from acquire(): calls in it re-enter that lock. */
  runInLock<T>(handle: LockHandle | MultiLockHandle, fn: () => T): T {
    return this.engine.runInLock(handle, fn);
  }

  /**
   * Runs `fn` in the critical section of `handle` and releases it afterwards; app.close() lets it
   * finish first (within `drainMs`), as it does for using().
   */
  hold<T>(handle: LockHandle | MultiLockHandle, fn: () => Promise<T> | T): Promise<T> {
    return this.engine.hold(handle, fn);
  }

  /** The lock this async context holds: for `key`, or the innermost one. */
  current(key?: string): LockHandle | undefined {
    return this.engine.current(key);
  }

  /** True when `key` is held by any process (of any kind, or of `options.kind`). */
  isLocked(key: string, options?: InspectLockOptions): Promise<boolean> {
    return this.engine.isLocked(key, options);
  }

  /** Who holds `key` (owner, since, until, token, holds) and who waits; null when it is free. */
  inspect(key: string, options?: InspectLockOptions): Promise<LockInfo | null> {
    return this.engine.inspect(key, options);
  }

  /** Held locks of every process and node, a page at a time (see docs/CONSOLE.md). */
  list(options?: ListLocksOptions): Promise<ListLocksResult> {
    return this.engine.list(options);
  }

  /**
   * Evicts the holders of `key`: advances its fence, wakes its waiters, aborts the holders' signals
   * ('force-released'), writes the audit entry (also to this app's log). False when nothing was held.
   */
  forceRelease(key: string, options: ForceReleaseOptions): Promise<boolean> {
    return this.engine.forceRelease(key, options);
  }

  /** The newest force-release audit entries (of one key with `options.key`). */
  forceReleases(options?: ForceReleaseLogOptions): Promise<ForceReleaseRecord[]> {
    return this.engine.forceReleases(options);
  }

  /** Observability events: acquired, notAcquired, contended, released, renewed, lost, forceReleased. */
  get events(): LockEvents {
    return this.engine.events;
  }

  /** Held locks, local waiters and subscribed channels of this service. */
  stats(): LockEngineStats {
    return this.engine.stats();
  }

  /** Health for a readiness probe: the engine's PING round trip plus held and waiting locks. */
  async health(): Promise<DistributedLockHealth> {
    const stats = this.stats();
    const refused = [...this.refused].map(([what, reason]) => `${what}: ${reason}`);
    const base = { held: stats.held, waiting: stats.waitingLocks, ...(refused.length > 0 && { refused }) };
    if (this.closing) return { status: 'down', redis: null, ...base, error: SERVICE_CLOSED_MESSAGE };
    const readiness = await this.engine.readiness();
    return readiness.ready
      ? { status: 'up', redis: readiness.latencyMs, ...base }
      : { status: 'down', redis: null, ...base, error: readiness.reason };
  }

  /** @internal Logs connection loss and recovery through Nest's Logger, once per change. */
  onModuleInit(): void {
    this.engine.events.on('connection', this.logConnection);
    this.engine.events.on('refusal', this.logRefusal);
    this.stopLostLocksLog = logLostLocks(this.engine.events, this.logger);
  }

  /** @internal */
  onApplicationBootstrap(): void {
    void this.engine.readiness();
  }

  /** @internal Releases held locks, stops timers, unsubscribes, closes the connections the module opened. */
  onApplicationShutdown(): Promise<void> {
    this.closing ??= this.engine.close().finally(() => {
      this.engine.events.off('connection', this.logConnection);
      this.engine.events.off('refusal', this.logRefusal);
      this.stopLostLocksLog?.();
    });
    return this.closing;
  }

  /** A refusal is logged once per change (the engine reports changes only) and kept for health(). */
  private readonly logRefusal = (change: { what: string; reason: string | undefined }): void => {
    if (change.reason === undefined) {
      this.refused.delete(change.what);
      this.logger.log(`Redis accepts the ${change.what} again`);
      return;
    }
    this.refused.set(change.what, change.reason);
    const effect =
      change.what === 'lock registry'
        ? 'list() does not show the locks of this service'
        : 'a force release reaches its holders only at their next renewal';
    this.logger.error(
      `Redis refused the ${change.what}: ${change.reason}; locks work, but ${effect}. Check the ACL (docs/SECURITY.md)`,
    );
  };

  private readonly logConnection = (change: ConnectionState): void => {
    if (change.state === 'down') {
      this.logger.error(
        `${change.name} unreachable: ${change.reason ?? 'unknown cause'}; locks fail with 503 until it is back`,
      );
    } else {
      this.logger.log(`${change.name} connection ${this.wasDown ? 'recovered' : 'ready'}`);
    }
    this.wasDown = change.state === 'down';
  };
}
