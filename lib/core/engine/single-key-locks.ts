import { LockNotAcquiredError, LockServiceClosedError } from '../errors';
import type { LockOptions } from '../options/lock-options';
import { assertLockKey } from '../options/lock-key';
import { callLockOptions } from '../options/lock-options-validation';
import { Acquisition } from './acquisition';
import type { LockingParts } from './acquisition';
import { heldInScope } from './lock-context';
import { GrantHandle, LockHandle } from './lock-handle';
import { reenter } from './reentry';

/**
 * The single-key side of a LockEngine (acquire, tryAcquire, using with one key): validation,
 * re-entry by async context (reentry.ts), and the wait (Acquisition).
 */
export class SingleKeyLocks {
  constructor(private readonly deps: LockingParts) {}

  /** Validates (before any I/O), re-enters when this context holds the lock, else waits for it. */
  async lock(key: string, options: LockOptions | undefined, tryOnly: boolean): Promise<LockHandle | null> {
    const { engineId, backend, context } = this.deps;
    assertLockKey(key);
    const opts = callLockOptions(options);
    opts.signal?.throwIfAborted();
    const kind = backend.kinds.kindFor(opts);
    const names = this.deps.keys.names(key, kind.tag);
    const held = heldInScope(`${engineId}|${names.lock}`);
    if (context.closing.aborted && !(held instanceof GrantHandle && held.grant.active)) {
      throw new LockServiceClosedError(context.held.grants.size === 0 ? 'closed' : 'shutting down', key);
    }
    // The grant, not this one handle: after a downgrade the frame's write handle is released while
    // the read hold on the same grant lives on, and asking again must re-enter, not self-deadlock.
    if (held instanceof GrantHandle) {
      if (held.grant.active) return reenter(context.events, held.grant, { kind, options: opts, tryOnly });
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
    const fixedLease = opts.leaseMs ?? this.deps.options.defaults.leaseMs;
    return new Acquisition(context, {
      key,
      names,
      kind,
      options: opts,
      waitMs: opts.waitMs ?? (tryOnly ? 0 : this.deps.options.defaults.waitMs),
      leaseMs: Math.min(fixedLease ?? this.deps.options.watchdogLeaseMs, opts.maxHoldMs ?? Infinity),
      watchdog: fixedLease === undefined,
      tryOnly,
    }).run();
  }
}
