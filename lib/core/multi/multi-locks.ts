import {
  LockLostError,
  LockNotAcquiredError,
  LockPartialReentryError,
  LockServiceClosedError,
} from '../errors';
import type { LockingParts } from '../engine/acquisition';
import { kindName } from '../engine/held-locks';
import { monotonicMs, randomId } from '../engine/ids';
import { heldInScope, runInLockScope } from '../engine/lock-context';
import { GrantHandle } from '../engine/lock-grant';
import type { LockOptions } from '../options/lock-options';
import { callLockOptions } from '../options/lock-options-validation';
import { MultiAcquisition } from './multi-acquisition';
import { PerKeyLocker, type MultiKeyLocker, type MultiLockTarget } from './multi-key-locker';
import { MultiGrantHandle } from './multi-lock-handle';
import { assertMultiKeyOptions, multiLockKeys } from './multi-keys';

/**
 * The multi-key side of a LockEngine: validation, re-entry by async context, and the all-or-none
 * wait (MultiAcquisition). Every key's hold is an ordinary LockGrant, so the watchdog, fixed leases,
 * loss detection and release are the single-key ones.
 */
export class MultiLocks {
  private readonly locker: MultiKeyLocker;

  constructor(private readonly deps: LockingParts) {
    this.locker = deps.backend.multiKeys ?? new PerKeyLocker();
  }

  /** Validates (before any I/O), re-enters when this context holds every key, else waits for all. */
  async lock(
    keys: unknown,
    options: LockOptions | undefined,
    tryOnly: boolean,
  ): Promise<MultiGrantHandle | null> {
    const { engineId, backend, context } = this.deps;
    const ordered = multiLockKeys(keys);
    const opts = callLockOptions(options);
    assertMultiKeyOptions(opts);
    opts.signal?.throwIfAborted();
    const kind = backend.kinds.kindFor(opts);
    const targets: MultiLockTarget[] = ordered.map((key) => ({
      key,
      names: this.deps.keys.names(key, kind.tag),
    }));
    const held = targets.map((t) => heldInScope(`${engineId}|${t.names.lock}`));
    const grants = held.map((h) => (h instanceof GrantHandle ? h.grant : undefined));
    const lost = grants.find((g) => g?.lost);
    if (lost) throw lost.lost;
    const active = grants.filter((g) => g?.active);
    if (active.length === targets.length) return this.reenter(targets, opts, tryOnly);
    if (active.length > 0) {
      throw new LockPartialReentryError(
        targets.filter((_, i) => grants[i]?.active).map((t) => t.key),
        targets.filter((_, i) => !grants[i]?.active).map((t) => t.key),
      );
    }
    if (context.closing.aborted) throw new LockServiceClosedError('shutting down', ordered[0]);
    const fixedLease = opts.leaseMs ?? this.deps.options.defaults.leaseMs;
    return new MultiAcquisition(context, this.locker, {
      targets,
      kind,
      options: opts,
      waitMs: opts.waitMs ?? (tryOnly ? 0 : this.deps.options.defaults.waitMs),
      leaseMs: Math.min(fixedLease ?? this.deps.options.watchdogLeaseMs, opts.maxHoldMs ?? Infinity),
      watchdog: fixedLease === undefined,
      tryOnly,
    }).run();
  }

  /** Every key is held by this context: one more hold on each grant (its own token kept). */
  private async reenter(
    targets: readonly MultiLockTarget[],
    opts: LockOptions,
    tryOnly: boolean,
  ): Promise<MultiGrantHandle | null> {
    const kind = this.deps.backend.kinds.kindFor(opts);
    const grants = targets.map(
      (t) => (heldInScope(`${this.deps.engineId}|${t.names.lock}`) as GrantHandle).grant,
    );
    const refused = grants.find((g) => !kind.reentrant || !g.kind.reentrant);
    if (refused) {
      if (tryOnly) return null;
      throw new LockNotAcquiredError(refused.key, 0, -1, {
        reason: 'this async context already holds it and it is not reentrant',
      });
    }
    const started = monotonicMs();
    const handles: GrantHandle[] = [];
    try {
      for (const grant of grants) {
        const holdId = randomId();
        const result = await kind.attempt({
          key: grant.key,
          names: grant.names,
          owner: grant.owner,
          holdId,
          leaseMs: grant.leaseMs,
          reenter: true,
          options: opts,
        });
        if (result.status !== 'granted') {
          grant.lose('expired');
          throw grant.lost ?? new LockLostError(grant.key, 'expired');
        }
        handles.push(new GrantHandle(grant, holdId));
      }
    } catch (err) {
      await Promise.all(handles.map((h) => h.release()));
      throw err;
    }
    for (const h of handles) {
      this.deps.context.events.safeEmit('acquired', {
        key: h.key,
        kind: kindName(kind, opts),
        waitedMs: monotonicMs() - started,
        attempts: 1,
        reentered: true,
        fencingToken: h.fencingToken,
      });
    }
    return new MultiGrantHandle(handles);
  }
}

/** Runs `fn` inside the critical section of every key of `handle`: nested calls for any of them re-enter. */
export function runInMultiLockScope<T>(handle: MultiGrantHandle, fn: () => T): T {
  const enter = (i: number): T => {
    const h = handle.handles[i] as GrantHandle | undefined;
    return h ? runInLockScope(h.grant.scopeKey, h, () => enter(i + 1)) : fn();
  };
  return enter(0);
}
