import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import { LockLostError, LockLostReason } from '../errors';
import {
  type LockKeyNames,
  type LockKind,
  kindOf,
  type HoldRef,
  type ReleaseResult,
} from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { assertDuration } from '../options/validation';
import type { LocalWaitQueues } from '../waiting/waiter';
import { Cohort, type CohortOpening, type CohortBounds } from './cohort';
import { deadlines, type Deadline, monotonicMs } from '../time/deadlines';
import type { LockEvents } from '../events/lock-events';
import { Watchdog } from './watchdog';

/*
 * The grant: one lock this engine holds, from its grant to its end. In reading order:
 * - the lease's drift allowance;
 * - LockGrant (one grant: lease, tokens, cohort, loss) and GrantHandle (one hold of it, what the
 *   caller gets);
 * - who holds it: the unguessable owner and hold ids, and the async context a critical section runs in;
 * - HeldLocks, every grant of one engine: the one release path, renewals, the watchdog, hold times.
 */

/**
 * Redlock's clock-drift allowance, applied to every lease: 1 % of the lease plus 2 ms. A lease ends
 * in this process that much before Redis can expire it, so a holder learns of a loss before another
 * process can be granted the lock, even when its timer fires a little late or its clock runs a
 * little fast against the server's (see docs/GUARANTEES.md, "Leases end early"). RedLock uses the
 * same allowance for its validity.
 */
export const DRIFT_FACTOR = 0.01;
/** The fixed part of the drift allowance, in ms (timer granularity). */
export const DRIFT_FLOOR_MS = 2;

/** The drift allowance of a lease of `leaseMs`, in ms. */
export function leaseDriftMs(leaseMs: number): number {
  return Math.ceil(leaseMs * DRIFT_FACTOR) + DRIFT_FLOOR_MS;
}

/** What a new grant is: the lock, its owner and token, and its lease. */
export interface GrantSpec {
  readonly kind: LockKind;
  readonly key: string;
  readonly names: LockKeyNames;
  readonly owner: string;
  readonly fencingToken: number;
  readonly options: LockOptions;
  readonly leaseMs: number;
  readonly watchdog: boolean;
  /** Monotonic time the granting request was sent: the lease is counted from then. */
  readonly requestedAt: number;
  readonly replicaAcks?: number;
  /** Monotonic time of the grant when it is not `requestedAt` (a local hand-off). */
  readonly grantedAt?: number;
  /** The per-process cohort this grant belongs to, or the opening of a new one (a fresh cohort grant). */
  readonly cohort?: Cohort | CohortOpening;
}

/**
 * One grant of a lock by Redis: owner, fencing token, lease and the signal shared by the handles of
 * its holds (the first acquire and every re-entry). Its local end (the lease minus the drift
 * allowance, or `maxHoldMs`) is a deadline on the process' one timer; a renewal moves it.
 */
export class LockGrant implements Deadline {
  /** Created on first use (handle.signal or a loss): most grants never need one. */
  private controller?: AbortController;
  readonly openHolds = new Set<string>();
  /** Monotonic time at which the lease runs out unless renewed (counted from before the request). */
  expiresAt: number;
  /**
   * Monotonic time at which this process considers the lease over: `expiresAt` minus the drift
   * allowance, so the holder is told before Redis can grant the lock to anyone else.
   */
  localEnd: number;
  /** Monotonic time the granting request was sent. */
  readonly grantedAt: number;
  lost?: LockLostError;
  ended = false;
  /** The lease in ms. */
  readonly leaseMs: number;
  /** True when the watchdog renews the lease. */
  readonly watchdog: boolean;
  readonly replicaAcks?: number;
  /** Monotonic time after which the lock is not renewed any more (maxHoldMs); Infinity without. */
  readonly holdDeadline: number;
  /** The cohort this grant belongs to, once it exists (see `cohort`). */
  private cohortState?: Cohort;
  /** A fresh cohort grant's opening: its Cohort is built when first needed (most grants never hand over). */
  private readonly opening?: CohortOpening;
  /** Renewed since the opening: the Redis lease then ends at `expiresAt`. */
  private renewedSinceOpening = false;
  /** Set when a cohort ended at its bound: this process' next waiter yields this long (ms). */
  yieldOnEnd = 0;
  /** @internal The deadline (Deadline): the local end or maxHoldMs, whichever is first. */
  at = Infinity;
  /** @internal */
  slot = -1;

  readonly kind: LockKind;
  /** The user key, exactly as given. */
  readonly key: string;
  readonly names: LockKeyNames;
  /** The owner id written to Redis (shared by a cohort's grants). */
  readonly owner: string;
  readonly fencingToken: number;
  readonly options: LockOptions;

  constructor(
    readonly held: HeldLocks,
    spec: GrantSpec,
  ) {
    this.kind = spec.kind;
    this.key = spec.key;
    this.names = spec.names;
    this.owner = spec.owner;
    this.fencingToken = spec.fencingToken;
    this.options = spec.options;
    this.leaseMs = spec.leaseMs;
    this.watchdog = spec.watchdog;
    this.replicaAcks = spec.replicaAcks;
    const requestedAt = spec.requestedAt;
    this.grantedAt = spec.grantedAt ?? requestedAt;
    const cohort = spec.cohort;
    if (cohort instanceof Cohort) this.cohortState = cohort;
    else this.opening = cohort;
    this.expiresAt = requestedAt + spec.leaseMs;
    this.localEnd = this.expiresAt - leaseDriftMs(spec.leaseMs);
    this.holdDeadline =
      spec.options.maxHoldMs === undefined ? Infinity : requestedAt + spec.options.maxHoldMs;
    this.schedule();
  }

  /** The per-process cohort of this grant (cohort kinds), built on first use. */
  get cohort(): Cohort | undefined {
    if (!this.cohortState && this.opening) {
      // A fresh cohort grant was granted when its request was sent (grantedAt is requestedAt).
      this.cohortState = new Cohort(this.opening, this.fencingToken, this.grantedAt);
      if (this.renewedSinceOpening) this.cohortState.redisExpiresAt = this.expiresAt;
    }
    return this.cohortState;
  }

  /** The hold that keeps the Redis lock of this grant's cohort, if it has one. */
  get cohortHoldId(): string | undefined {
    return this.cohortState?.holdId ?? this.opening?.holdId;
  }

  /** The scope key of this grant's critical sections (engine id + lock name). */
  get scopeKey(): string {
    return `${this.held.engineId}|${this.names.lock}`;
  }

  /** The signal shared by the handles of this grant; aborted with LockLostError on a loss. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  get active(): boolean {
    return !this.ended && !this.lost;
  }

  /**
   * The lease a renewal sent at `sentAt` asks for: never past maxHoldMs (0: do not renew). Whole
   * milliseconds: what is left of maxHoldMs is measured on the monotonic clock, in fractions, and the
   * scripts take whole ones (they refused a fraction, and the lock was reported lost).
   */
  renewalLeaseMs(sentAt: number, leaseMs = this.leaseMs): number {
    return Math.max(0, Math.min(leaseMs, Math.floor(this.holdDeadline - sentAt)));
  }

  /** Moves the lease end (after a renewal sent at `sentAt`) and the deadline with it. */
  renewed(sentAt: number, leaseMs: number): void {
    this.expiresAt = sentAt + leaseMs;
    this.localEnd = this.expiresAt - leaseDriftMs(leaseMs);
    if (this.cohortState) this.cohortState.redisExpiresAt = this.expiresAt;
    else if (this.opening) this.renewedSinceOpening = true;
    if (this.active) this.schedule();
  }

  /**
   * A re-entry sent at `sentAt` moved the lease in Redis to at least `sentAt + leaseMs` (the acquire
   * scripts never shorten it): the local lease end follows, so handle and Redis agree.
   */
  reentered(sentAt: number): void {
    if (this.active && sentAt + this.leaseMs > this.expiresAt) this.renewed(sentAt, this.leaseMs);
  }

  /** Marks the grant lost: aborts the signal at once and stops its deadline and renewals. */
  lose(reason: LockLostReason, cause?: unknown): void {
    if (this.lost || this.ended) return;
    this.lost = new LockLostError(this.key, reason, cause);
    deadlines.remove(this);
    // Built now if nobody asked for the signal yet, so a later handle.signal is already aborted.
    this.controller ??= new AbortController();
    this.controller.abort(this.lost);
    this.held.ended(this, this.lost);
  }

  /** Ends the grant after its last release: no deadline, no renewals. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    deadlines.remove(this);
    this.held.ended(this);
  }

  /** @internal The deadline passed: the lease ended locally (or maxHoldMs did). */
  expire(): void {
    // A lease that maxHoldMs capped (the last renewal or extend() could go no further) ends there on
    // purpose: 'max-hold', though its drift allowance makes it end locally a little before.
    const capped = this.expiresAt >= this.holdDeadline - 1;
    this.lose(this.at === this.holdDeadline || capped ? 'max-hold' : 'expired');
  }

  private schedule(): void {
    // A watchdog lease is renewed before its local end; when no renewal came back in time (a hanging
    // connection), this deadline ends it there. maxHoldMs ends any grant on purpose.
    this.at = Math.min(this.localEnd, this.holdDeadline);
    deadlines.schedule(this);
  }
}

/** A held lock. One handle per acquire; a re-entry gets its own handle on the same grant. */
export interface LockHandle {
  /** The user key, exactly as given. */
  readonly key: string;
  /** Strictly increases across all holders of this lock (a key and its kind); hand it to storage that rejects stale writers. */
  readonly fencingToken: number;
  /** Aborted (reason: LockLostError) the moment the lock is known lost. Not aborted by a normal release. */
  readonly signal: AbortSignal;
  /** Replicas that acknowledged the grant (Sentinel with `WAIT`); undefined when not asked for. */
  readonly replicaAcks?: number;
  /** Releases this hold. Resolves false, never throws, when it was no longer held (or Redis failed). */
  release(): Promise<boolean>;
  /** Extends the lease (default: the lease it was taken with). Throws LockLostError when no longer held. */
  extend(leaseMs?: number): Promise<void>;
  /** Milliseconds left of the lease by this process' monotonic clock, drift allowance deducted (0 when lost or released). */
  remainingMs(): number;
  /** True until released or lost. */
  readonly isHeld: boolean;
}

/** The handle of one hold on a grant. */
export class GrantHandle implements LockHandle {
  private released = false;

  constructor(
    readonly grant: LockGrant,
    readonly holdId: string,
  ) {
    grant.openHolds.add(holdId);
  }

  get key(): string {
    return this.grant.key;
  }
  get fencingToken(): number {
    return this.grant.fencingToken;
  }
  get signal(): AbortSignal {
    return this.grant.signal;
  }
  get replicaAcks(): number | undefined {
    return this.grant.replicaAcks;
  }
  get isHeld(): boolean {
    return !this.released && this.grant.active;
  }

  remainingMs(): number {
    return this.isHeld ? Math.max(0, this.grant.localEnd - monotonicMs()) : 0;
  }

  release(): Promise<boolean> {
    if (this.released) return Promise.resolve(false);
    this.released = true;
    return this.grant.held.release(this.grant, this.holdId);
  }

  async extend(leaseMs?: number): Promise<void> {
    // The same check as the leaseMs option, before any I/O: a bad value never reaches Redis or the
    // local deadline (0 or -1 would end the lease locally while Redis keeps it).
    if (leaseMs !== undefined) assertDuration(leaseMs, 'leaseMs', 1);
    const g = this.grant;
    if (this.released || g.ended) throw new LockLostError(g.key, 'expired');
    if (g.lost) throw g.lost;
    await g.held.extend(g, leaseMs ?? g.leaseMs);
  }
}

// ---- Who holds it: the ids that name an owner and a hold in Redis, and the async context ----

const ID_BYTES = 20;
const POOL_IDS = 256;
let pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let offset = pool.length;

/**
 * An unguessable id (20 random bytes = 160 bits, base64url): owner tokens and hold ids. The bytes
 * come from the CSPRNG in pooled batches (one randomFillSync per 256 ids), which costs a fraction
 * of a randomBytes(20) call per id on the hot path of every acquire.
 */
export function randomId(): string {
  if (offset + ID_BYTES > pool.length) {
    // A fresh buffer each refill: ids already handed out were copied into strings, never reused.
    pool = randomFillSync(Buffer.allocUnsafe(ID_BYTES * POOL_IDS));
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

/**
 * Ownership by async context. Node has no thread id, so the owner of a lock is the async call tree
 * of its critical section: `using()` and decorated methods run their body in a new frame that maps
 * the lock to its handle. Frames are immutable and only created at that boundary, so sibling calls
 * started outside the critical section never see the lock, while everything inside it does.
 */
interface LockFrame {
  readonly held: ReadonlyMap<string, LockHandle>;
  readonly innermost?: LockHandle;
}

const storage = new AsyncLocalStorage<LockFrame>();

/** Runs `fn` inside the critical section of `handle` (scope key: engine id + lock name). */
export function runInLockScope<T>(scopeKey: string, handle: LockHandle, fn: () => T): T {
  const parent = storage.getStore();
  const held = new Map(parent?.held);
  held.set(scopeKey, handle);
  return storage.run({ held, innermost: handle }, fn);
}

/**
 * The handle this async context holds for lock `lockName` of engine `engineId`, if any (it may since
 * have been released). Outside every critical section it costs one lookup and builds no string.
 */
export function heldInScope(engineId: string, lockName: string): LockHandle | undefined {
  const frame = storage.getStore();
  return frame?.held.get(`${engineId}|${lockName}`);
}

/** The innermost lock of this async context, or the one for a scope key. */
export function currentInScope(
  filter?: (scopeKey: string, handle: LockHandle) => boolean,
): LockHandle | undefined {
  const frame = storage.getStore();
  if (!frame) return undefined;
  if (!filter) return frame.innermost;
  let found: LockHandle | undefined;
  for (const [k, h] of frame.held) if (filter(k, h)) found = h; // later entries are inner scopes
  return found;
}

// ---- Every grant of one engine ----

/** Keys whose hold times are remembered (least recently updated forgotten first). */
const MAX_HOLD_TIME_KEYS = 1_000;
/** Weight of the newest hold in the moving average of hold times. */
const HOLD_TIME_ALPHA = 0.3;

/**
 * Recent hold times per key, from this process' own releases: the honest "retry after" for a lock
 * kept alive by the watchdog, whose remaining lease (up to 30 s) says nothing about when it frees.
 */
export class HoldTimes {
  private readonly averages = new Map<string, number>();

  /** Records one hold of `key` that lasted `heldMs`. */
  record(key: string, heldMs: number): void {
    const previous = this.averages.get(key);
    if (previous !== undefined) this.averages.delete(key); // re-inserted last: Map order is the eviction order
    this.averages.set(
      key,
      previous === undefined ? heldMs : previous + HOLD_TIME_ALPHA * (heldMs - previous),
    );
    if (this.averages.size > MAX_HOLD_TIME_KEYS) this.averages.delete(this.averages.keys().next().value!);
  }

  /**
   * When a busy lock is likely free, in ms: the holder's remaining lease when it is a fixed lease;
   * for a watchdog lease (remaining time above `watchdogFloorMs`, which only a renewed lock has)
   * the key's average hold time, capped by that lease; -1 when nothing is known.
   */
  estimate(key: string, remainingLeaseMs: number, watchdogFloorMs: number): number {
    if (remainingLeaseMs < 0) return -1;
    if (remainingLeaseMs <= watchdogFloorMs) return remainingLeaseMs;
    const average = this.averages.get(key);
    return average === undefined ? -1 : Math.min(Math.ceil(average), remainingLeaseMs);
  }
}

/**
 * The locks one engine holds: the grants by lock name, their watchdog, the one release path
 * (minHoldMs, the cohort hand-off, the Redis release and its background retries), renewals by
 * extend(), recent hold times, and the events about all of them. Handles call down into it; a grant
 * tells it when it ended.
 */
export class HeldLocks {
  readonly grants = new Set<LockGrant>();
  readonly watchdog: Watchdog;
  /** Live grants per lock name, so local waiters know the lock is this process' own right now. */
  private readonly byLock = new Map<string, number>();
  /** Background retries of releases that failed on a Redis error (see retryRelease). */
  private readonly releaseRetries = new Set<NodeJS.Timeout>();
  /** Recent hold times per key, for an honest "retry after". */
  readonly holdTimes = new HoldTimes();
  private stopped = false;
  private readonly cohort: CohortBounds | false;

  constructor(
    readonly engineId: string,
    private readonly events: LockEvents,
    private readonly queues: LocalWaitQueues,
    settings: {
      readonly renewEveryMs: number;
      readonly cohort: CohortBounds | false;
    },
  ) {
    this.cohort = settings.cohort;
    this.watchdog = new Watchdog(settings.renewEveryMs, (round) => this.events.safeEmit('renewed', round));
  }

  /** Tracks a new grant (and hands it to the watchdog when it has no fixed lease). */
  add(grant: LockGrant): void {
    this.grants.add(grant);
    const lock = grant.names.lock;
    this.byLock.set(lock, (this.byLock.get(lock) ?? 0) + 1);
    if (grant.watchdog) this.watchdog.add(grant);
  }

  /** True while this engine holds `lockName` (its waiters then wait for it locally, not in Redis). */
  holdsLocally(lockName: string): boolean {
    return this.byLock.has(lockName);
  }

  /**
   * The longest remaining lease, in ms, of this engine's live grants of `lockName`; -1 when it holds
   * none. What a local waiter, which never asked Redis, reports as the holder's remaining lease.
   */
  remainingLeaseOf(lockName: string): number {
    if (!this.byLock.has(lockName)) return -1;
    const now = monotonicMs();
    let longest = -1;
    for (const grant of this.grants) {
      if (grant.active && grant.names.lock === lockName) {
        longest = Math.max(longest, Math.ceil(grant.expiresAt - now));
      }
    }
    return longest;
  }

  /**
   * Releases one hold of `grant` in Redis: the path of every release (handles, and close()).
   * Resolves false, never throws, when the hold was no longer held or Redis failed (then retried in
   * the background until the lease would have ended anyway: a failover can outlast one command timeout).
   */
  async release(grant: LockGrant, holdId: string): Promise<boolean> {
    if (!grant.openHolds.delete(holdId)) return false; // already released (e.g. by close())
    // A grant this process already reported lost (its lease ended locally, drift allowance included)
    // is cleaned up in Redis all the same, but the release says "not held": handle and answer agree.
    const reportedLost = grant.lost !== undefined;
    const last = grant.openHolds.size === 0;
    const base: HoldRef = {
      key: grant.key,
      names: grant.names,
      owner: grant.owner,
      holdId,
      options: grant.options,
    };
    if (last && grant.active) {
      const keepMs =
        grant.options.minHoldMs === undefined ? 0 : grant.grantedAt + grant.options.minHoldMs - monotonicMs();
      if (keepMs >= 1) return this.keepUntilMinHold(grant, base, keepMs);
      if (holdId === grant.cohortHoldId && this.handOff(grant)) return true;
    }
    // A cohort that ended at its bound (handOff set yieldOnEnd) lets the other processes' waiters go first.
    const hold: HoldRef =
      grant.yieldOnEnd > 0 ? { ...base, yieldTo: { process: this.engineId, ms: grant.yieldOnEnd } } : base;
    let result: ReleaseResult;
    try {
      result = await grant.kind.release(hold);
    } catch (err) {
      const leaseEnd = grant.expiresAt;
      if (grant.openHolds.size === 0) grant.end();
      this.released(grant, 'failed', err);
      this.retryRelease(grant, hold, leaseEnd);
      return false;
    }
    if (result === 'not-held') grant.lose('expired');
    if (result === 'released' || grant.openHolds.size === 0) grant.end();
    this.released(grant, result);
    return result !== 'not-held' && !reportedLost;
  }

  /** Renews `grant` for `asked` ms (a handle's extend()); throws its LockLostError when no longer held. */
  async extend(grant: LockGrant, asked: number): Promise<void> {
    const sentAt = monotonicMs();
    const leaseMs = grant.renewalLeaseMs(sentAt, asked);
    if (leaseMs === 0) {
      grant.lose('max-hold');
      throw grant.lost!;
    }
    const [result] = await grant.kind.renew([
      {
        key: grant.key,
        names: grant.names,
        owner: grant.owner,
        holdId: '',
        options: grant.options,
        leaseMs,
        // A reply after the local lease end could not be trusted any more.
        timeoutMs: Math.max(1, grant.localEnd - sentAt),
        holdIds: [...grant.openHolds],
      },
    ]);
    if (result !== 'renewed') {
      grant.lose(result === 'gone' ? 'expired' : 'taken-over');
      throw grant.lost!;
    }
    grant.renewed(sentAt, leaseMs);
  }

  /** Stops every timer: the watchdog and the release retries (at shutdown). */
  stopTimers(): void {
    this.stopped = true;
    this.watchdog.stop();
    for (const timer of this.releaseRetries) clearTimeout(timer);
    this.releaseRetries.clear();
  }

  /** @internal A grant ended (released, or lost with `lost`): bookkeeping, and the local head is told. */
  ended(grant: LockGrant, lost?: LockLostError): void {
    if (!this.grants.delete(grant)) return;
    if (grant.watchdog) this.watchdog.delete(grant);
    const lock = grant.names.lock;
    const left = (this.byLock.get(lock) ?? 1) - 1;
    if (left > 0) this.byLock.set(lock, left);
    else {
      this.byLock.delete(lock);
      // Local waiters were not polling Redis meanwhile: tell the head.
      this.queues.notifyFree(lock);
    }
    if (lost && this.events.wants('lost')) {
      this.events.safeEmit('lost', {
        key: grant.key,
        kind: kindOf(grant.options).event,
        fencingToken: grant.fencingToken,
        heldMs: monotonicMs() - grant.grantedAt,
        reason: lost.reason,
        error: lost,
      });
    }
  }

  /**
   * The cohort hand-off: the last hold of a cohort grant is being released and this process' head
   * waiter takes the lock without a Redis command when the cohort's bounds allow it (Cohort.handOff).
   */
  private handOff(grant: LockGrant): boolean {
    if (!this.cohort || this.stopped) return false;
    const next = this.queues.head(grant.names.lock)?.waiter;
    if (!next) return false; // nobody of this process waits: release in Redis
    const handle = grant.cohort!.handOff(grant, next, monotonicMs(), this.cohort);
    if (!handle) return false;
    this.add(handle.grant); // first, so the watchdog never sees the lock without a grant
    grant.end();
    this.released(grant, 'released');
    next!.receive(handle);
    return true;
  }

  /**
   * The last release before minHoldMs: instead of deleting the lock, shorten (or stretch) its lease
   * so it ends exactly at grant + minHoldMs. The grant ends here; Redis lets the lock expire.
   */
  private async keepUntilMinHold(grant: LockGrant, hold: HoldRef, keepMs: number): Promise<boolean> {
    let result: string;
    try {
      [result = 'gone'] = await grant.kind.renew([{ ...hold, holdId: '', leaseMs: Math.ceil(keepMs) }]);
    } catch (err) {
      grant.end();
      this.released(grant, 'failed', err);
      return false; // the lease ends it anyway
    }
    if (result !== 'renewed') grant.lose('expired');
    grant.end();
    this.released(grant, result === 'renewed' ? 'released' : 'not-held');
    return result === 'renewed';
  }

  /** A release answered: records the hold time and reports it. */
  private released(grant: LockGrant, result: ReleaseResult | 'failed', error?: unknown): void {
    const heldMs = monotonicMs() - grant.grantedAt;
    if (result === 'released') this.holdTimes.record(grant.key, heldMs);
    // Local waiters are told in ended() (they did not poll Redis meanwhile); fairness across
    // processes comes from the cohort bound and the reservation for the longest-waiting process.
    if (!this.events.wants('released')) return;
    this.events.safeEmit('released', {
      key: grant.key,
      kind: kindOf(grant.options).event,
      fencingToken: grant.fencingToken,
      heldMs,
      result,
      error,
    });
  }

  private retryRelease(grant: LockGrant, hold: HoldRef, untilMonotonic: number): void {
    if (this.stopped) return; // shutting down: the lease ends it
    let delayMs = 100;
    const attempt = () => {
      this.releaseRetries.delete(timer);
      if (this.stopped || monotonicMs() >= untilMonotonic) return; // the lease ends it now
      grant.kind.release(hold).then(
        (result) => this.released(grant, result),
        () => {
          delayMs = Math.min(delayMs * 2, 2_000);
          timer = setTimeout(attempt, delayMs).unref();
          this.releaseRetries.add(timer);
        },
      );
    };
    let timer = setTimeout(attempt, delayMs).unref();
    this.releaseRetries.add(timer);
  }
}
