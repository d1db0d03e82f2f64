import { setMaxListeners } from 'node:events';
import { LockError, LockLostError, LockNotAcquiredError, LockUpgradeError } from './errors';
import { HeldLocks, kindName } from './held-locks';
import { monotonicMs, randomId } from './ids';
import { KeySpace } from './key-space';
import { currentInScope, heldInScope, runInLockScope } from './lock-context';
import { LockEvents } from './lock-events';
import { GrantHandle, LockGrant, LockHandle } from './lock-handle';
import type { AttemptResult, LockKind } from './lock-kind';
import { LockEngineOptions, LockOptions, ResolvedEngineOptions } from './lock-options';
import { KindRegistry } from './kind-registry';
import { assertLockKey, resolveEngineOptions, validateLockOptions } from './validation';
import { WakeupHub, Wakeups } from './wakeup-hub';
import { LocalWaitQueues } from './wait-queue';
import { linkSignals } from './abort';

/** The parts of the Redis side an engine is built on (one Redis, a Cluster, Sentinel or RedLock). */
export interface LockBackend {
  /** Picks the lock kind for validated options. */
  readonly kinds: KindRegistry;
  /** The wake-up hub (pub/sub). */
  readonly hub: WakeupHub;
  /** Closes what the backend opened (never a client passed in by the user). */
  close(): Promise<void>;
}

/**
 * The lock engine: waiting (local FIFO + pub/sub + capped backoff), leases and the watchdog,
 * ownership by async context, handles, events and shutdown. Plain Node; no Nest inside.
 */
export class LockEngine {
  readonly engineId = randomId().slice(0, 8);
  readonly events = new LockEvents();
  readonly options: ResolvedEngineOptions;
  private readonly keys: KeySpace;
  private readonly held: HeldLocks;
  private readonly queues = new LocalWaitQueues();
  private readonly closing = new AbortController();
  private closed?: Promise<void>;

  constructor(
    private readonly backend: LockBackend,
    options: LockEngineOptions = {},
  ) {
    this.options = resolveEngineOptions(options);
    this.keys = new KeySpace(this.options.keyPrefix);
    // Every waiter listens to `closing` until it leaves; thousands of waiters are normal, not a leak.
    setMaxListeners(0, this.closing.signal);
    this.held = new HeldLocks(this.engineId, this.events, this.options.renewEveryMs);
  }

  /** Takes the lock, waiting up to `waitMs`; rejects with LockNotAcquiredError when it stays busy. */
  async acquire(key: string, options?: LockOptions): Promise<LockHandle> {
    return (await this.lock(key, options, false))!;
  }

  /** Like acquire, but resolves null when busy (default `waitMs` 0: a single attempt). */
  tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null> {
    return this.lock(key, options, true);
  }

  /** Runs `fn` holding the lock, inside its critical section (nested calls re-enter); always releases. */
  async using<T>(
    key: string,
    options: LockOptions | undefined,
    fn: (lock: LockHandle) => Promise<T> | T,
  ): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError('using() needs a function as its third argument');
    const handle = await this.acquire(key, options);
    try {
      return await this.runInLock(handle, () => fn(handle));
    } finally {
      await handle.release();
    }
  }

  /** Runs `fn` inside the critical section of a handle from acquire(): calls in it re-enter that lock. */
  runInLock<T>(handle: LockHandle, fn: () => T): T {
    if (!(handle instanceof GrantHandle) || handle.grant.host !== this.held) {
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
  stats(): { held: number; watchdog: number; waitingLocks: number; channels: number; closed: boolean } {
    return {
      held: this.held.grants.size,
      watchdog: this.held.watchdog.size,
      waitingLocks: this.queues.size,
      channels: this.backend.hub.channelCount,
      closed: this.closed !== undefined,
    };
  }

  /** Releases held locks, wakes and fails waiters, stops timers, unsubscribes, closes owned connections. */
  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing.abort(new LockError('The lock service is shutting down'));
    this.held.stopTimers();
    const releases: Promise<unknown>[] = [];
    for (const grant of [...this.held.grants]) {
      for (const holdId of [...grant.openHolds]) {
        grant.openHolds.delete(holdId);
        const hold = {
          key: grant.key,
          names: grant.names,
          owner: grant.owner,
          holdId,
          options: grant.options,
        };
        releases.push(grant.kind.release(hold).catch(() => undefined));
      }
      grant.lose('closed');
    }
    await Promise.all(releases);
    await this.backend.close();
  }

  // ---- acquisition -------------------------------------------------------------------------

  private async lock(
    key: string,
    options: LockOptions | undefined,
    tryOnly: boolean,
  ): Promise<LockHandle | null> {
    assertLockKey(key);
    const opts = validateLockOptions(options);
    opts.signal?.throwIfAborted();
    if (this.closed) throw new LockError('The lock service is closed', key);
    const kind = this.backend.kinds.kindFor(opts);
    const names = this.keys.names(key, kind.tag);
    const held = heldInScope(`${this.engineId}|${names.lock}`);
    // The grant, not this one handle: after a downgrade the frame's write handle is released while
    // the read hold on the same grant lives on, and asking again must re-enter, not self-deadlock.
    if (held instanceof GrantHandle) {
      if (held.grant.active) return this.reenter(held.grant, kind, opts, tryOnly);
      // Inside a critical section whose lock is lost, asking again must not quietly take a new lock:
      // the code around it still assumes the old one. A normally released grant is simply over.
      if (held.grant.lost) throw held.grant.lost;
    }
    const waitMs = opts.waitMs ?? (tryOnly ? 0 : this.options.defaults.waitMs);
    const fixedLease = opts.leaseMs ?? this.options.defaults.leaseMs;
    return this.waitAndAcquire(key, names, kind, opts, waitMs, fixedLease, tryOnly);
  }

  private async reenter(
    grant: LockGrant,
    kind: LockKind,
    opts: LockOptions,
    tryOnly: boolean,
  ): Promise<LockHandle | null> {
    const key = grant.key;
    if (!kind.reentrant || !grant.kind.reentrant) {
      if (tryOnly) return null;
      throw new LockNotAcquiredError(
        key,
        0,
        -1,
        'this async context already holds it and it is not reentrant',
      );
    }
    if (grant.options.mode === 'read' && opts.mode === 'write') throw new LockUpgradeError(key);
    const holdId = randomId();
    const started = monotonicMs();
    const result = await kind.attempt({
      key,
      names: grant.names,
      owner: grant.owner,
      holdId,
      leaseMs: grant.leaseMs,
      reenter: true,
      options: opts,
    });
    if (result.status !== 'granted') {
      grant.lose('expired');
      throw grant.lost ?? new LockLostError(key, 'expired');
    }
    this.events.safeEmit('acquired', {
      key,
      kind: kindName(kind, opts),
      waitedMs: monotonicMs() - started,
      attempts: 1,
      reentered: true,
      fencingToken: grant.fencingToken,
    });
    return new GrantHandle(grant, holdId);
  }

  private async waitAndAcquire(
    key: string,
    names: ReturnType<KeySpace['names']>,
    kind: LockKind,
    opts: LockOptions,
    waitMs: number,
    fixedLease: number | undefined,
    tryOnly: boolean,
  ): Promise<LockHandle | null> {
    const leaseMs = fixedLease ?? this.options.watchdogLeaseMs;
    const owner = randomId();
    const holdId = randomId();
    const started = monotonicMs();
    const deadline = started + waitMs;
    const remaining = () => deadline - monotonicMs();
    // The linked signal (an AbortController and two listeners) is built only when the call has to
    // wait; a first attempt that wins never pays for it. Until then, `aborted` reads both sources.
    let link: { signal: AbortSignal; unlink: () => void } | undefined;
    const waitSignal = () => (link ??= linkSignals(opts.signal, this.closing.signal)).signal;
    const isAborted = () => opts.signal?.aborted === true || this.closing.signal.aborted;
    const ticket = this.queues.enter(names.lock, kind.isExclusive?.(opts) ?? kind.exclusive);
    const { initialMs, maxMs } = this.options.backoff;
    let wake: Wakeups | undefined;
    let acquired = false;
    let attempts = 0;
    let retryAfterMs = -1;
    let busyReason: string | undefined; // e.g. a RedLock split vote, for the final error
    let backoff = initialMs;
    let attemptNow = ticket.takeAttemptNow();
    const kindLabel = kindName(kind, opts);
    const fail = (reason: 'timeout' | 'aborted' | 'closed' | 'error') =>
      this.events.safeEmit('notAcquired', {
        key,
        kind: kindLabel,
        waitedMs: monotonicMs() - started,
        attempts,
        reason,
        tryOnly,
      });
    try {
      for (;;) {
        if (isAborted()) break;
        if (!ticket.isHead) {
          wake ??= await this.backend.hub.join(names.channel);
          if (!(await ticket.turn(Math.max(0, remaining()), waitSignal()))) {
            if (isAborted()) break;
            return this.timedOut(key, started, retryAfterMs, tryOnly, fail, busyReason);
          }
          attemptNow = ticket.takeAttemptNow();
          // Promoted because the predecessor just won: wake-ups seen before that are stale.
          if (!attemptNow) wake.discardPending();
          backoff = initialMs;
        }
        if (!attemptNow) {
          if (remaining() <= 0) return this.timedOut(key, started, retryAfterMs, tryOnly, fail, busyReason);
          wake ??= await this.backend.hub.join(names.channel);
          const holderLeft = retryAfterMs >= 0 ? retryAfterMs + 1 : Infinity;
          await wake.wait(Math.max(1, Math.min(backoff, holderLeft, remaining())), waitSignal());
          backoff = Math.min(backoff * 2, maxMs);
          if (isAborted()) break;
        }
        attemptNow = false;
        attempts++;
        const requestedAt = monotonicMs();
        let result: AttemptResult;
        try {
          result = await kind.attempt({ key, names, owner, holdId, leaseMs, reenter: false, options: opts });
        } catch (err) {
          fail('error');
          throw err;
        }
        if (result.status === 'granted') {
          acquired = true;
          const grant = new LockGrant(
            this.held,
            kind,
            key,
            names,
            owner,
            result.fencingToken,
            opts,
            leaseMs,
            fixedLease === undefined,
            requestedAt,
            result.replicaAcks,
          );
          const handle = new GrantHandle(grant, holdId);
          this.held.add(grant);
          if (this.closed) {
            await handle.release();
            throw new LockError('The lock service is closed', key);
          }
          this.events.safeEmit('acquired', {
            key,
            kind: kindLabel,
            waitedMs: requestedAt - started,
            attempts,
            reentered: false,
            fencingToken: result.fencingToken,
            ...(result.replicaAcks !== undefined && { replicaAcks: result.replicaAcks }),
          });
          return handle;
        }
        retryAfterMs = result.status === 'busy' ? result.retryAfterMs : -1;
        busyReason = result.status === 'busy' ? result.reason : undefined;
        this.events.safeEmit('contended', { key, kind: kindLabel, retryAfterMs });
        if (remaining() <= 0) return this.timedOut(key, started, retryAfterMs, tryOnly, fail, busyReason);
        if (!wake) {
          // Subscribe, then try once more at once: a release between our attempt and the
          // subscription would otherwise only be noticed by the backoff.
          wake = await this.backend.hub.join(names.channel);
          attemptNow = true;
        }
      }
      // Aborted: by the caller's signal, or by close().
      if (this.closing.signal.aborted && !opts.signal?.aborted) {
        fail('closed');
        throw new LockNotAcquiredError(
          key,
          monotonicMs() - started,
          retryAfterMs,
          'the lock service is shutting down',
        );
      }
      fail('aborted');
      throw opts.signal!.reason;
    } finally {
      link?.unlink();
      ticket.leave(acquired);
      wake?.leave();
      // Kinds that queue waiters in Redis drop this one's entry now instead of at its deadline.
      if (!acquired && attempts > 0 && kind.abandon) {
        void kind.abandon({ key, names, owner, holdId, leaseMs, reenter: false, options: opts });
      }
    }
  }

  private timedOut(
    key: string,
    started: number,
    retryAfterMs: number,
    tryOnly: boolean,
    fail: (reason: 'timeout') => void,
    busyReason?: string,
  ): null {
    fail('timeout');
    if (tryOnly) return null;
    const waited = monotonicMs() - started;
    const reason = busyReason && `${busyReason}; gave up after ${Math.round(waited)} ms`;
    throw new LockNotAcquiredError(key, waited, retryAfterMs, reason);
  }
}
