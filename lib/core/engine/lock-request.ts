import {
  LockLostError,
  LockNotAcquiredError,
  LockPartialReentryError,
  LockServiceClosedError,
  LockUpgradeError,
} from '../errors';
import { kindOf } from '../kinds/kind-registry';
import type { LockKind } from '../kinds/lock-kind';
import { MultiAcquisition } from '../multi/multi-acquisition';
import { PerKeyLocker, type MultiKeyLocker, type MultiLockTarget } from '../multi/multi-key-locker';
import { MultiGrantHandle, type MultiLockHandle } from '../multi/multi-lock-handle';
import { assertMultiKeyOptions, multiLockKeys } from '../multi/multi-keys';
import type { LockOptions } from '../options/lock-options';
import { assertLockKey, callLockOptions } from '../options/validation';
import { Acquisition, type LockingParts } from './acquisition';
import { monotonicMs } from './deadlines';
import { heldInScope, randomId } from './lock-context';
import { GrantHandle, type LockGrant, type LockHandle } from './lock-grant';

/** What one call asks for, whatever the number of keys: validated options and their consequences. */
interface CallShape {
  readonly options: LockOptions;
  readonly kind: LockKind;
  readonly kindLabel: string;
  readonly waitMs: number;
  readonly leaseMs: number;
  readonly watchdog: boolean;
}

/**
 * Turns one acquire / tryAcquire / using call, with one key or many, into its request: key and
 * options validated before any I/O, the kind, the Redis names, the wait and the lease with the
 * engine's defaults, and then either a re-entry (this async context holds the lock already: one more
 * hold, the same token) or a wait for the lock (Acquisition, MultiAcquisition). Single-key and
 * multi-key calls share every step but the wait.
 */
export class LockRequests {
  private readonly locker: MultiKeyLocker;

  constructor(private readonly parts: LockingParts) {
    this.locker = parts.backend.multiKeys ?? new PerKeyLocker();
  }

  /** One key: re-enters when this context holds the lock, else waits for it. */
  async one(key: string, options: LockOptions | undefined, tryOnly: boolean): Promise<LockHandle | null> {
    assertLockKey(key);
    const call = this.shape(options, tryOnly);
    const names = this.parts.keys.names(key, call.kind.tag);
    const held = heldInScope(this.parts.engineId, names.lock);
    const context = this.parts.context;
    if (context.closing.aborted && !(held instanceof GrantHandle && held.grant.active)) {
      throw new LockServiceClosedError(context.held.grants.size === 0 ? 'closed' : 'shutting down', key);
    }
    // The grant, not this one handle: after a downgrade the frame's write handle is released while
    // the read hold on the same grant lives on, and asking again must re-enter, not self-deadlock.
    if (held instanceof GrantHandle) {
      if (held.grant.active) return (await this.reenter([held.grant], call, tryOnly))?.[0] ?? null;
      // Inside a critical section whose lock is lost, asking again must not quietly take a new lock:
      // the code around it still assumes the old one. A normally released grant is simply over.
      if (held.grant.lost) throw held.grant.lost;
    }
    if (context.queues.isFull(names.lock)) {
      // Busy, with no room to wait: fail fast instead of growing the queue without bound.
      if (tryOnly) return null;
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
      tryOnly,
    }).run();
  }

  /** Several keys, all or none: re-enters when this context holds every one, else waits for all. */
  async many(
    keys: unknown,
    options: LockOptions | undefined,
    tryOnly: boolean,
  ): Promise<MultiLockHandle | null> {
    const ordered = multiLockKeys(keys);
    const call = this.shape(options, tryOnly);
    assertMultiKeyOptions(call.options);
    const targets: MultiLockTarget[] = ordered.map((key) => ({
      key,
      names: this.parts.keys.names(key, call.kind.tag),
    }));
    const grants = targets.map((t) => {
      const held = heldInScope(this.parts.engineId, t.names.lock);
      return held instanceof GrantHandle ? held.grant : undefined;
    });
    const lost = grants.find((g) => g?.lost);
    if (lost) throw lost.lost;
    const active = grants.filter((g): g is LockGrant => g?.active === true);
    if (active.length === targets.length) {
      const handles = await this.reenter(active, call, tryOnly);
      return handles && new MultiGrantHandle(handles);
    }
    if (active.length > 0) {
      throw new LockPartialReentryError(
        targets.filter((_, i) => grants[i]?.active).map((t) => t.key),
        targets.filter((_, i) => !grants[i]?.active).map((t) => t.key),
      );
    }
    const context = this.parts.context;
    if (context.closing.aborted) throw new LockServiceClosedError('shutting down', ordered[0]);
    return new MultiAcquisition(context, this.locker, { ...call, targets, tryOnly }).run();
  }

  /** The options of a call, validated, and what follows from them with the engine's defaults. */
  private shape(options: LockOptions | undefined, tryOnly: boolean): CallShape {
    const opts = callLockOptions(options);
    opts.signal?.throwIfAborted();
    const kind = this.parts.backend.kinds.kindFor(opts);
    const { defaults, watchdogLeaseMs } = this.parts.options;
    const fixedLease = opts.leaseMs ?? defaults.leaseMs;
    return {
      options: opts,
      kind,
      kindLabel: kindOf(opts).event,
      waitMs: opts.waitMs ?? (tryOnly ? 0 : defaults.waitMs),
      leaseMs: Math.min(fixedLease ?? watchdogLeaseMs, opts.maxHoldMs ?? Infinity),
      watchdog: fixedLease === undefined,
    };
  }

  /**
   * The one re-entry path: this async context holds every grant of `grants` (one key or all keys of
   * a multi-key call), so each gets one more hold in Redis with the grant's owner and token, and the
   * lease moves to at least the grant's lease from now. A grant Redis no longer has is lost (its
   * signal aborts) and the call fails with that loss; holds taken before it are given back.
   */
  private async reenter(
    grants: readonly LockGrant[],
    call: CallShape,
    tryOnly: boolean,
  ): Promise<GrantHandle[] | null> {
    const { kind, options } = call;
    const refused = grants.find((g) => !kind.reentrant || !g.kind.reentrant);
    if (refused) {
      if (tryOnly) return null;
      throw new LockNotAcquiredError(refused.key, 0, -1, {
        reason: 'this async context already holds it and it is not reentrant',
      });
    }
    const upgrade = grants.find((g) => g.options.mode === 'read' && options.mode === 'write');
    if (upgrade) throw new LockUpgradeError(upgrade.key);
    const started = monotonicMs();
    const handles: GrantHandle[] = [];
    try {
      for (const grant of grants) {
        const holdId = randomId();
        const sentAt = monotonicMs();
        const result = await kind.attempt({
          key: grant.key,
          names: grant.names,
          owner: grant.owner,
          holdId,
          leaseMs: grant.leaseMs,
          reenter: true,
          options,
        });
        if (result.status !== 'granted') {
          grant.lose('expired');
          throw grant.lost ?? new LockLostError(grant.key, 'expired');
        }
        grant.reentered(sentAt);
        handles.push(new GrantHandle(grant, holdId));
      }
    } catch (err) {
      await Promise.all(handles.map((h) => h.release()));
      throw err;
    }
    const events = this.parts.context.events;
    if (events.wants('acquired')) {
      for (const h of handles) {
        events.safeEmit('acquired', {
          key: h.key,
          kind: call.kindLabel,
          waitedMs: monotonicMs() - started,
          attempts: 1,
          reentered: true,
          fencingToken: h.fencingToken,
        });
      }
    }
    return handles;
  }
}
