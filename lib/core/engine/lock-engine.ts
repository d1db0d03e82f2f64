import { setMaxListeners } from 'node:events';
import { LockServiceClosedError } from '../errors';
import { EngineInspection } from '../inspection/engine-inspection';
import type {
  ForceReleaseLogOptions,
  ForceReleaseOptions,
  ForceReleaseRecord,
  InspectLockOptions,
  ListLocksOptions,
  ListLocksResult,
  LockInfo,
} from '../options/lock-info';
import type { LockInspector } from '../inspection/lock-inspector';
import { KeySpace } from '../kinds/key-space';
import { MultiGrantHandle, type MultiLockHandle } from '../multi/multi-lock-handle';
import { LockOptions, ResolvedEngineOptions } from '../options/lock-options';
import { assertLockKey } from '../options/validation';
import { LocalWaitQueues } from '../waiting/local-wait-queues';
import { cohortLeaseExtraMs, cohortTokenBlock } from '../grant/cohort';
import { CriticalSections } from './critical-sections';
import { LockEngineReadiness, LockEngineStats, pingReadiness } from './engine-status';
import type { LockBackend } from './lock-backend';
import { LockEvents } from '../events/lock-events';
import { HeldLocks } from '../grant/held-locks';
import { currentInScope, runInLockScope } from '../grant/lock-scope';
import type { Runtime } from '../runtime/runtime';
import { GrantHandle, LockHandle } from '../grant/grant-handle';
import { type AcquisitionContext } from '../waiting/acquisition-context';
import { LockRequests } from './lock-requests';

/**
 * The lock engine: the public surface (acquire, tryAcquire, using, current, close). Waiting lives
 * in Acquisition, held locks and the watchdog in HeldLocks, the storage behind a LockBackend.
 * Plain Node; no Nest inside. Built by createLockEngine() from options resolved once.
 */
export class LockEngine {
  readonly engineId: string;
  readonly events = new LockEvents();
  private readonly keys: KeySpace;
  private readonly held: HeldLocks;
  private readonly queues: LocalWaitQueues;
  private readonly closing = new AbortController();
  private readonly context: AcquisitionContext;
  private closed?: Promise<void>;
  /** A lock call was answered: force-release notices are listened for (afterLockCall ran). */
  private listening = false;
  /** Inspection (list, inspect, forceRelease) and this engine's registry record; none on the in-memory backend. */
  private readonly inspection?: EngineInspection;
  /** Critical sections running in using() / hold(): close() lets them finish (drainMs). */
  private readonly sections: CriticalSections;
  /** Turns each call, one key or many, into a re-entry or a wait (lock-request.ts). */
  private readonly requests: LockRequests;

  constructor(
    private readonly backend: LockBackend,
    /** Resolved by resolveEngineOptions() (createLockEngine does it). */
    readonly options: ResolvedEngineOptions,
    /** Its clocks, timers and random ids (nodeRuntime in production; virtual in the simulator). */
    readonly runtime: Runtime,
  ) {
    this.engineId = runtime.randomId().slice(0, 8);
    this.sections = new CriticalSections(runtime);
    this.keys = new KeySpace(options.keyPrefix);
    this.queues = new LocalWaitQueues(runtime, options.maxWaitersPerKey);
    // Every waiter listens to `closing` until it leaves; thousands of waiters are normal, not a leak.
    setMaxListeners(0, this.closing.signal);
    this.held = new HeldLocks(this.engineId, this.events, this.queues, {
      renewEveryMs: options.renewEveryMs,
      cohort: options.cohort,
      runtime,
    });
    backend.watchConnections?.((state) => this.events.safeEmit('connection', state));
    // A connection made again: the server may have restarted or failed over without our locks.
    backend.watchReconnects?.(() => void this.held.verify());
    const heldLocks = this.held;
    this.context = {
      runtime,
      hub: backend.hub,
      queues: this.queues,
      held: this.held,
      events: this.events,
      closing: this.closing.signal,
      backoff: options.backoff,
      reserveTokens: cohortTokenBlock(options.cohort),
      recordedWaits: new Set<string>(),
      cohortLeaseExtraMs: cohortLeaseExtraMs(options.cohort),
      // A renewed watchdog lease never has less than lease − period left; a fixed one may.
      retryAfter: (key, remaining) =>
        heldLocks.holdTimes.estimate(key, remaining, options.watchdogLeaseMs - options.renewEveryMs - 50),
      isClosed: () => this.closed !== undefined,
    };
    this.requests = new LockRequests({
      engineId: this.engineId,
      keys: this.keys,
      backend,
      context: this.context,
      options,
    });
    const { engineId, keys, held, queues, events } = this;
    this.inspection = EngineInspection.open({
      engineId,
      runtime,
      target: backend.inspection,
      options,
      keys,
      held,
      queues,
      events,
    });
  }

  /** True when `key` is held, by any process (of any kind, or of `options.kind`). */
  async isLocked(key: string, options?: InspectLockOptions): Promise<boolean> {
    return this.inspector().isLocked(key, options);
  }

  /** Who holds `key` (owner, since when, until when, token, holds) and who waits; null when free. */
  async inspect(key: string, options?: InspectLockOptions): Promise<LockInfo | null> {
    return this.inspector().inspect(key, options);
  }

  /** Held locks across every process and node, a page at a time (from the registry; never KEYS/SCAN). */
  async list(options?: ListLocksOptions): Promise<ListLocksResult> {
    return this.inspector().list(options);
  }

  /**
   * Evicts the holders of `key`, advances its fencing token, wakes its waiters, aborts the holders'
   * signals ('force-released') and writes an audit entry. False when nothing was held.
   */
  async forceRelease(key: string, options: ForceReleaseOptions): Promise<boolean> {
    return this.inspector().forceRelease(key, options);
  }

  /** The newest force-release audit entries (of one key when `options.key` is given). */
  async forceReleases(options?: ForceReleaseLogOptions): Promise<ForceReleaseRecord[]> {
    return this.inspector().forceReleases(options);
  }

  /**
   * The inspector: a TypeError on a backend without inspection (the in-memory testing backend),
   * LockServiceClosedError after close().
   */
  private inspector(): LockInspector {
    if (!this.inspection) {
      throw new TypeError('Inspection (list, inspect, forceRelease) is not supported by this lock backend');
    }
    if (this.closed) throw new LockServiceClosedError('closed');
    return this.inspection.inspector;
  }

  /** Takes the lock, waiting up to `waitMs`; rejects with LockNotAcquiredError when it stays busy. */
  acquire(key: string, options?: LockOptions): Promise<LockHandle>;
  /** Takes every key, all or none, deadlock-free (see docs/ARCHITECTURE.md, multi-key locks). */
  acquire(keys: readonly string[], options?: LockOptions): Promise<MultiLockHandle>;
  acquire(key: string | readonly string[], options?: LockOptions): Promise<LockHandle | MultiLockHandle>;
  acquire(key: string | readonly string[], options?: LockOptions): Promise<LockHandle | MultiLockHandle> {
    // Never null: only tryAcquire resolves null. serve() is async: a bad argument rejects, never throws.
    const served = this.requests.serve(key, options, false) as Promise<LockHandle | MultiLockHandle>;
    // Once notices are listened for, the answer is passed on as it is: no promise more per call.
    return this.listening ? served : served.then(this.afterLockCall);
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
    const served = this.requests.serve(key, options, true);
    return this.listening ? served : served.then(this.afterLockCall);
  }

  /** Runs `fn` holding the lock, inside its critical section (nested calls re-enter); always releases. */
  using<T>(
    key: string,
    options: LockOptions | undefined,
    fn: (lock: LockHandle) => Promise<T> | T,
  ): Promise<T>;
  /** Runs `fn` holding every key, inside the critical section of each (nested calls re-enter). */
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
    const handle = await this.acquire(key, options);
    return this.hold(handle, () => (fn as (lock: LockHandle | MultiLockHandle) => Promise<T> | T)(handle));
  }

  /** Runs `fn` inside the critical section of a handle from acquire(): calls in it re-enter that lock. */
  runInLock<T>(handle: LockHandle | MultiLockHandle, fn: () => T): T {
    if (handle instanceof MultiGrantHandle && handle.handles.every((h) => h.grant.held === this.held)) {
      // Inside the critical section of every key: nested calls for any of them re-enter.
      const enter = (i: number): T => {
        const h = handle.handles[i] as GrantHandle | undefined;
        return h ? runInLockScope(h.grant.scopeKey, h, () => enter(i + 1)) : fn();
      };
      return enter(0);
    }
    if (!(handle instanceof GrantHandle) || handle.grant.held !== this.held) {
      throw new TypeError('runInLock() needs a handle returned by this lock service');
    }
    return runInLockScope(handle.grant.scopeKey, handle, fn);
  }

  /** The lock this async context holds: for `key`, or the innermost one. */
  current(key?: string): LockHandle | undefined {
    if (key !== undefined) assertLockKey(key);
    return currentInScope(
      (scopeKey, h) =>
        scopeKey.startsWith(`${this.engineId}|`) && h.isHeld && (key === undefined || h.key === key),
    );
  }

  /** Held grants, local waiters and subscribed channels (for health checks, metrics and leak tests). */
  stats(): LockEngineStats {
    return {
      held: this.held.grants.size,
      watchdog: this.held.watchdog.size,
      waitingLocks: this.queues.size,
      channels: this.backend.hub.channelCount,
      closed: this.closed !== undefined,
    };
  }

  /** PINGs the storage within `commandTimeoutMs`: ready with the round trip, or why not. Never throws. */
  async readiness(): Promise<LockEngineReadiness> {
    if (this.closed) return { ready: false, reason: 'the lock service is closed' };
    return pingReadiness(this.backend, this.options.commandTimeoutMs);
  }

  /** Releases held locks, wakes and fails waiters, stops timers, unsubscribes, closes owned connections. */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  /**
   * Runs `fn` inside the critical section of `handle` and releases it afterwards, counting it as a
   * running critical section that close() lets finish (decorated methods use this).
   */
  hold<T>(handle: LockHandle | MultiLockHandle, fn: () => Promise<T> | T): Promise<T> {
    return this.sections.hold(handle, () => this.runInLock(handle, fn));
  }

  /**
   * A lock call answered: this engine uses locks, so it listens for force-release notices from now on
   * (once; subscribed beside the lock path, not on it: the first call does not wait for it).
   */
  private readonly afterLockCall = <H>(handle: H): H => {
    this.inspection?.listenForNotices();
    this.listening = true;
    return handle;
  };

  private async shutdown(): Promise<void> {
    this.closing.abort(new LockServiceClosedError('shutting down'));
    // Running critical sections finish first (their locks renewed), within drainMs.
    await this.sections.drain(this.options.drainMs);
    this.held.stopTimers();
    const releases: Promise<boolean>[] = [];
    for (const grant of [...this.held.grants]) {
      // Told first, so code still running in the critical section stops before the lock is gone.
      grant.lose('closed');
      for (const holdId of [...grant.openHolds]) releases.push(this.held.release(grant, holdId));
    }
    await Promise.all(releases);
    // Removes this engine's registry record before the backend closes.
    await this.inspection?.close();
    await this.backend.close();
  }
}
