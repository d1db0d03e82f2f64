import { LockNotAcquiredError, LockPartialReentryError, LockServiceClosedError } from '../errors';
import { GrantHandle, type LockHandle } from '../grant/grant-handle';
import type { LockGrant } from '../grant/lock-grant';
import { heldInScope } from '../grant/lock-scope';
import type { KeySpace } from '../kinds/key-space';
import type { KindRegistry } from '../kinds/kind-registry';
import type { LockKind } from '../kinds/lock-kind';
import { MultiAcquisition } from '../multi/multi-acquisition';
import { PerKeyLocker, type MultiKeyLocker, type MultiLockTarget } from '../multi/multi-key-locker';
import { assertMultiKeyOptions, multiLockKeys } from '../multi/multi-keys';
import { MultiGrantHandle, type MultiLockHandle } from '../multi/multi-lock-handle';
import type { LockOptions, ResolvedEngineOptions } from '../options/lock-options';
import { assertLockKey, callLockOptions } from '../options/validation';
import type { AcquisitionContext } from '../waiting/acquisition-context';
import { Acquisition } from './acquisition';
import type { LockBackend } from './lock-backend';
import { reenter } from './reentry';

/*
 * One lock call, top-down: LockRequests turns acquire / tryAcquire, with one key or many, into a
 * call (keys and options validated, kind, Redis names, wait and lease), then re-enters the locks this
 * async context holds (reentry.ts) or waits for them: Acquisition for one key (acquisition.ts),
 * MultiAcquisition for several (multi/). Either ends in grants (grant/).
 */

/** One call, whatever the number of keys: its locks, validated options and their consequences. */
export interface LockCall {
  /** The keys, with their Redis names: one, or several de-duplicated in the global order. */
  readonly targets: readonly MultiLockTarget[];
  readonly options: LockOptions;
  readonly kind: LockKind;
  /** The kind's name in events (mutex, token, read, write, fair, semaphore). */
  readonly kindLabel: string;
  readonly waitMs: number;
  readonly leaseMs: number;
  /** True when the watchdog renews the lease (no fixed `leaseMs`). */
  readonly watchdog: boolean;
  /** tryAcquire(): resolve null instead of throwing when the wait runs out. */
  readonly tryOnly: boolean;
}

/** The parts of an engine that single-key and multi-key locking share. */
export interface LockingParts {
  readonly engineId: string;
  readonly keys: KeySpace;
  readonly backend: LockBackend;
  readonly context: AcquisitionContext;
  readonly options: ResolvedEngineOptions;
}

/**
 * Turns one acquire / tryAcquire call, with one key or many, into its call: keys and options
 * validated before any I/O, the kind, the Redis names, the wait and the lease with the engine's
 * defaults; then either a re-entry (this async context holds every lock already: one more hold each,
 * the same tokens) or a wait for the locks (Acquisition, MultiAcquisition).
 */
export class LockRequests {
  private readonly locker: MultiKeyLocker;
  private readonly kinds: KindRegistry;

  constructor(private readonly parts: LockingParts) {
    this.locker = parts.backend.multiKeys ?? new PerKeyLocker();
    this.kinds = parts.backend.kinds;
  }

  /** One key (a string) or several (an array, all or none): a handle, or null for tryOnly when busy. */
  async serve(
    key: unknown,
    options: LockOptions | undefined,
    tryOnly: boolean,
  ): Promise<LockHandle | MultiLockHandle | null> {
    const call = this.callOf(key, options, tryOnly);
    const { context, engineId } = this.parts;
    // The grant, not this one handle: after a downgrade the frame's write handle is released while
    // the read hold on the same grant lives on, and asking again must re-enter, not self-deadlock.
    const grantOf = (t: MultiLockTarget) => {
      const held = heldInScope(engineId, t.names.lock);
      return held instanceof GrantHandle ? held.grant : undefined;
    };
    if (!Array.isArray(key)) return this.one(call, grantOf(call.targets[0]!));
    const grants = call.targets.map(grantOf);
    const lost = grants.find((g) => g?.lost);
    if (lost) throw lost.lost;
    const active = grants.filter((g): g is LockGrant => g?.active === true);
    if (active.length === grants.length) {
      const handles = await reenter(active, call, context.events, context.runtime);
      return handles && new MultiGrantHandle(handles);
    }
    if (active.length > 0) {
      throw new LockPartialReentryError(
        call.targets.filter((_, i) => grants[i]?.active).map((t) => t.key),
        call.targets.filter((_, i) => !grants[i]?.active).map((t) => t.key),
      );
    }
    if (context.closing.aborted) throw new LockServiceClosedError('shutting down', call.targets[0]!.key);
    return new MultiAcquisition(context, this.locker, call).run();
  }

  /** The call of `key` (or keys) and `options`, every part validated before any I/O. */
  private callOf(key: unknown, options: LockOptions | undefined, tryOnly: boolean): LockCall {
    let keys: readonly string[];
    if (Array.isArray(key)) keys = multiLockKeys(key);
    else {
      assertLockKey(key);
      keys = [key];
    }
    const opts = callLockOptions(options);
    opts.signal?.throwIfAborted();
    const { kind, label } = this.kinds.chooseKind(opts);
    if (Array.isArray(key)) assertMultiKeyOptions(opts);
    const { keys: space, options: engine } = this.parts;
    const fixedLease = opts.leaseMs ?? engine.defaults.leaseMs;
    return {
      targets: keys.map((k) => ({ key: k, names: space.names(k, kind.tag) })),
      options: opts,
      kind,
      kindLabel: label,
      waitMs: opts.waitMs ?? (tryOnly ? 0 : engine.defaults.waitMs),
      leaseMs: Math.min(fixedLease ?? engine.watchdogLeaseMs, opts.maxHoldMs ?? Infinity),
      watchdog: fixedLease === undefined,
      tryOnly,
    };
  }

  /**
   * One key: re-enters when this context holds the lock, else waits for it. Not async itself (one
   * promise less per call on the hot path): it throws into serve(), which rejects with it.
   */
  private one(call: LockCall, grant: LockGrant | undefined): Promise<LockHandle | null> {
    const { key, names } = call.targets[0]!;
    const context = this.parts.context;
    if (context.closing.aborted && !grant?.active) {
      throw new LockServiceClosedError(context.held.grants.size === 0 ? 'closed' : 'shutting down', key);
    }
    if (grant?.active)
      return reenter([grant], call, context.events, context.runtime).then((handles) => handles?.[0] ?? null);
    // Inside a critical section whose lock is lost, asking again must not quietly take a new lock:
    // the code around it still assumes the old one. A normally released grant is simply over.
    if (grant?.lost) throw grant.lost;
    if (context.queues.isFull(names.lock)) {
      // Busy, with no room to wait: fail fast instead of growing the queue without bound.
      if (call.tryOnly) return Promise.resolve(null);
      throw new LockNotAcquiredError(key, 0, -1, {
        reason: `${context.queues.maxWaitersPerKey} callers of this process already wait for it (maxWaitersPerKey)`,
      });
    }
    return new Acquisition(context, {
      key,
      names,
      kind: call.kind,
      kindLabel: call.kindLabel,
      options: call.options,
      waitMs: call.waitMs,
      leaseMs: call.leaseMs,
      watchdog: call.watchdog,
      tryOnly: call.tryOnly,
    }).run();
  }
}
