import type { LockLostError } from '../errors';
import type { LockEvents } from '../events/lock-events';
import { kindOf } from '../kinds/kind-registry';
import type { HoldRef, LockKind, ReleaseResult, RenewResult } from '../kinds/lock-kind';
import type { CohortBounds, LockOptions } from '../options/lock-options';
import { localLeaseEnd } from '../runtime/lease-drift';
import type { Runtime, RuntimeTimer } from '../runtime/runtime';
import { SmallMap, SmallSet } from '../runtime/small-collections';
import { GrantHandle } from './grant-handle';
import { HoldTimes } from './hold-times';
import { type GrantKeeper, LockGrant } from './lock-grant';
import { Watchdog } from './watchdog';

/** A waiter a cohort hand-off may pass the lock to (a Waiter at the head of its local queue). */
export interface Successor {
  /** Whether it takes `grant`'s lock now (same kind and lease mode, still waiting, the head). */
  accepts(grant: LockGrant): boolean;
  /** The options and lease its grant gets (asked only when it accepted). */
  readonly handoffRequest: { readonly options: LockOptions; readonly leaseMs: number };
  /** Gives it the handed-over lock. */
  receive(handle: GrantHandle): void;
}

/** This process' local waiters as the release path sees them (LocalWaitQueues, waiting/). */
export interface LocalWaiters {
  /** The head waiter of `lockName` when it takes hand-offs (cohort kinds). */
  successor(lockName: string): Successor | undefined;
  /** This process stopped holding `lockName` (released for real or lost): the head may attempt now. */
  notifyFree(lockName: string): void;
}

/**
 * The locks one engine holds: the grants by lock name, their watchdog, the one release path
 * (minHoldMs, the cohort hand-off, the Redis release and its background retries), renewals by
 * extend(), recent hold times, and the events about all of them. Handles call down into it; a grant
 * tells it when it ended.
 */
export class HeldLocks implements GrantKeeper {
  readonly grants = new SmallSet<LockGrant>();
  readonly watchdog: Watchdog;
  /** Live grants per lock name, so local waiters know the lock is this process' own right now. */
  private readonly byLock = new SmallMap<string, number>();
  /** Background retries of releases that failed on a Redis error (see retryRelease). */
  private readonly releaseRetries = new Set<RuntimeTimer>();
  /** Recent hold times per key, for an honest "retry after". */
  readonly holdTimes = new HoldTimes();
  private stopped = false;
  readonly runtime: Runtime;
  private readonly cohort: CohortBounds | false;
  /** The check of every held lock in progress (verify), and whether another was asked for meanwhile. */
  private verifying?: Promise<void>;
  private verifyAgain = false;

  constructor(
    readonly engineId: string,
    private readonly events: LockEvents,
    private readonly waiters: LocalWaiters,
    settings: {
      readonly renewEveryMs: number;
      readonly cohort: CohortBounds | false;
      /** The engine's clocks and timers. */
      readonly runtime: Runtime;
    },
  ) {
    this.cohort = settings.cohort;
    this.runtime = settings.runtime;
    const runtime = this.runtime;
    this.watchdog = new Watchdog(runtime, settings.renewEveryMs, (round) =>
      this.events.safeEmit('renewed', round),
    );
  }

  /** Told of each new grant: a force release that named it before it arrived ends it (force-release.ts). */
  onAdd?: (grant: LockGrant) => void;

  /**
   * Whether a force release named a grant (owner id on lock) before its answer came, asked before it
   * is handed out (force-release.ts, takeEarly): such a grant is given back and the call goes on.
   */
  forcedBefore?: (owner: string, lock: string) => boolean;

  /**
   * Why a grant whose answer just came must not be handed out, or undefined. Its answer was read only
   * after the lease it won (counted from `requestedAt`) had run out here (a GC pause, SIGSTOP, a blocked
   * event loop): the caller would get a lock already lost, its token below those of grants made
   * meanwhile (simulator seeds 2018, 2326). Or a force release named its lock (`locks`: one lock's
   * name, or a multi-key round's targets) held by `owner` before the answer came (the notice overtook
   * the reply, or RedLock's force release reached the nodes the attempt had won while another node
   * kept it pending: seed 1076): lost too, and its token, taken before another caller's grant, may be
   * above it. Every target's notice is taken, not only the first: a retry by the same (reentrant) owner
   * must not meet the others. The caller gives the grant back and goes on as if busy, with this reason.
   */
  lostOnArrival(
    requestedAt: number,
    leaseMs: number,
    owner: string,
    locks: string | readonly { names: { lock: string } }[],
  ): string | undefined {
    if (this.runtime.now() >= localLeaseEnd(requestedAt, leaseMs)) {
      return `the grant came back after its lease (${leaseMs} ms) had run out`;
    }
    const named = this.forcedBefore;
    if (!named) return undefined;
    if (typeof locks === 'string') {
      return named(owner, locks) ? 'the grant was force-released before its answer came' : undefined;
    }
    let hit = false;
    for (const target of locks) if (named(owner, target.names.lock)) hit = true;
    return hit ? 'a key was force-released before its answer came' : undefined;
  }

  /** Tracks a new grant (and hands it to the watchdog when it has no fixed lease). */
  add(grant: LockGrant): void {
    this.grants.add(grant);
    const lock = grant.names.lock;
    this.byLock.set(lock, (this.byLock.get(lock) ?? 0) + 1);
    if (grant.watchdog) this.watchdog.add(grant);
    this.onAdd?.(grant);
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
    const now = this.runtime.now();
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
        grant.options.minHoldMs === undefined
          ? 0
          : grant.grantedAt + grant.options.minHoldMs - this.runtime.now();
      if (keepMs >= 1) return this.keepUntilMinHold(grant, base, keepMs);
      if (holdId === grant.cohortHoldId && this.handOff(grant)) {
        // Handed over: the successor's resumption is the lock's critical path, the releaser's is
        // not. Answering on the next turn lets the successor run (and send its first command) before
        // the releaser's code goes on, often straight into another acquire of the same lock (issue 46).
        await this.runtime.nextTurn();
        return true;
      }
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
    const sentAt = this.runtime.now();
    const leaseMs = grant.renewalLeaseMs(sentAt, asked);
    if (leaseMs === 0) {
      grant.lose('max-hold');
      throw grant.lost!;
    }
    // A shorter lease than is left stands in Redis from the moment the script runs, which may be
    // before any answer comes (or none does): the lease ends here at its end from the send on, so the
    // holder is told before Redis can grant the lock to anyone else (seed 5604: the answer was still
    // on its way when Redis let the key go). The request's deadline is the shortened local end too.
    // An extend() that gets no answer may have run all the same: that case is covered by this too.
    grant.mayHaveRenewed(sentAt, leaseMs);
    const [result] = await grant.kind.renew([grant.renewRequest(sentAt, leaseMs)]);
    if (result !== 'renewed') {
      grant.lose(result === 'gone' ? 'expired' : 'taken-over');
      throw grant.lost!;
    }
    grant.renewed(sentAt, leaseMs);
  }

  /**
   * Checks at once that Redis still has every lock held here: a connection came back, and the server
   * behind it may have restarted or failed over without them. One batched check per lock kind (the
   * renew scripts with a lease of 0: nothing is renewed, fixed leases stay as they are). A lock that
   * is gone aborts its signal ('reset'), one another owner holds now 'taken-over'; one that cannot be
   * checked counts as lost ('renewal-failed'), as an uncertain renewal does. Checks asked for while one
   * runs are served by one more check after it.
   */
  verify(): Promise<void> {
    if (this.verifying) {
      this.verifyAgain = true;
      return this.verifying;
    }
    const run = async (): Promise<void> => {
      do {
        this.verifyAgain = false;
        await this.verifyOnce();
      } while (this.verifyAgain && !this.stopped);
    };
    this.verifying = run().finally(() => (this.verifying = undefined));
    return this.verifying;
  }

  private async verifyOnce(): Promise<void> {
    if (this.stopped) return; // shutting down: close() releases what is held
    const byKind = new Map<LockKind, LockGrant[]>();
    for (const grant of this.grants) {
      // Its last hold is being released: that release answers for it.
      if (!grant.active || grant.openHolds.size === 0) continue;
      const list = byKind.get(grant.kind) ?? [];
      list.push(grant);
      byKind.set(grant.kind, list);
    }
    const sentAt = this.runtime.now();
    await Promise.all(
      [...byKind].map(async ([kind, grants]) => {
        let results: RenewResult[];
        try {
          results = await kind.renew(grants.map((g) => g.renewRequest(sentAt, 0)));
        } catch (err) {
          for (const g of grants) if (g.openHolds.size > 0) g.lose('renewal-failed', err);
          return;
        }
        results.forEach((result, i) => {
          const g = grants[i]!;
          if (result === 'renewed' || g.openHolds.size === 0) return;
          g.lose(result === 'gone' ? 'reset' : result === 'unchecked' ? 'renewal-failed' : 'taken-over');
        });
      }),
    );
  }

  /** Stops every timer: the watchdog and the release retries (at shutdown). */
  stopTimers(): void {
    this.stopped = true;
    this.watchdog.stop();
    for (const timer of this.releaseRetries) timer.cancel();
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
      this.waiters.notifyFree(lock);
    }
    if (lost && this.events.wants('lost')) {
      this.events.safeEmit('lost', {
        key: grant.key,
        kind: kindOf(grant.options).event,
        fencingToken: grant.fencingToken,
        heldMs: this.runtime.now() - grant.grantedAt,
        reason: lost.reason,
        error: lost,
      });
    }
  }

  /**
   * The cohort hand-off: the last hold of a cohort grant is being released and this process' head
   * waiter takes the lock without a Redis command when the cohort's bounds allow it (Cohort.handOff).
   * The successor is a new grant of the same Redis lock (owner), with its own token, signal and async
   * context; the Redis grant it rides on is the one the replicas acknowledged.
   */
  private handOff(grant: LockGrant): boolean {
    if (!this.cohort || this.stopped) return false;
    const next = this.waiters.successor(grant.names.lock);
    if (!next) return false; // nobody of this process waits: release in Redis
    const cohort = grant.cohort!;
    const now = this.runtime.now();
    const turn = cohort.handOff(grant, next, now, this.cohort);
    if (!turn) return false;
    if (turn === 'yield') {
      grant.yieldOnEnd = this.cohort.yieldMs;
      return false;
    }
    const successor = new LockGrant(this, {
      kind: grant.kind,
      key: grant.key,
      names: grant.names,
      owner: grant.owner,
      fencingToken: turn.fencingToken,
      options: next.handoffRequest.options,
      leaseMs: turn.leaseMs,
      watchdog: grant.watchdog,
      requestedAt: turn.requestedAt,
      grantedAt: now,
      replicaAcks: grant.replicaAcks,
      cohort,
    });
    const handle = new GrantHandle(successor, cohort.holdId);
    this.add(successor); // first, so the watchdog never sees the lock without a grant
    grant.end();
    this.released(grant, 'released');
    next.receive(handle);
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
    const heldMs = this.runtime.now() - grant.grantedAt;
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
      if (this.stopped || this.runtime.now() >= untilMonotonic) return; // the lease ends it now
      grant.kind.release(hold).then(
        (result) => this.released(grant, result),
        () => {
          delayMs = Math.min(delayMs * 2, 2_000);
          timer = this.runtime.setTimer(attempt, delayMs);
          this.releaseRetries.add(timer);
        },
      );
    };
    let timer = this.runtime.setTimer(attempt, delayMs);
    this.releaseRetries.add(timer);
  }
}
