import type { LockLostError } from '../errors';
import { monotonicMs } from './ids';
import type { LockEvents } from './lock-events';
import type { GrantHost, LockGrant } from './lock-grant';
import type { HoldRef, LockKind, ReleaseResult } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { Watchdog } from './watchdog';
import type { CohortBounds } from './cohort';
import type { LocalWaitQueues } from '../waiting/wait-queue';
import { GrantHandle } from './lock-handle';
import type { LocalHandoffTarget } from './local-handoff';

/**
 * The locks one engine holds: the grants, their watchdog, background release retries, and the
 * events about them. Handles call back into it (GrantHost); the engine adds grants and shuts it down.
 */
export class HeldLocks implements GrantHost {
  readonly grants = new Set<LockGrant>();
  readonly watchdog: Watchdog;
  /** Live grants per lock name, so local waiters know the lock is this process' own right now. */
  private readonly byLock = new Map<string, number>();
  /** Background retries of releases that failed on a Redis error (see retryRelease). */
  private readonly releaseRetries = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Called on every new grant (the inspection registry starts its timer). */
  onGrant?: () => void;

  private readonly cohort: CohortBounds | false;

  constructor(
    readonly engineId: string,
    private readonly events: LockEvents,
    private readonly queues: LocalWaitQueues,
    settings: { readonly renewEveryMs: number; readonly cohort: CohortBounds | false },
  ) {
    this.cohort = settings.cohort;
    this.watchdog = new Watchdog(settings.renewEveryMs, (round) => this.events.safeEmit('renewed', round));
  }

  /** Tracks a new grant (and hands it to the watchdog when it has no fixed lease). */
  add(grant: LockGrant): void {
    this.grants.add(grant);
    this.byLock.set(grant.names.lock, (this.byLock.get(grant.names.lock) ?? 0) + 1);
    if (grant.watchdog) this.watchdog.add(grant);
    this.onGrant?.();
  }

  /** True while this engine holds `lockName` (its waiters then wait for it locally, not in Redis). */
  holdsLocally(lockName: string): boolean {
    return this.byLock.has(lockName);
  }

  /**
   * The last hold of a cohort grant is being released: hands the lock to this process' head waiter
   * without a Redis round trip when the cohort's bounds allow it and the lease is safely alive.
   * Returns false when the caller must release in Redis.
   */
  handOff(grant: LockGrant): boolean {
    const cohort = grant.cohort;
    if (!cohort || !this.cohort || this.stopped || !grant.active) return false;
    if (grant.options.minHoldMs !== undefined || grant.options.maxHoldMs !== undefined) return false;
    const now = monotonicMs();
    // Never pass a lease that may be dead (a paused process): a watchdog lease must have a third
    // left; a fixed one must still be alive (and the Redis lease must cover the successor's, below).
    if (now >= grant.expiresAt - (grant.watchdog ? grant.leaseMs / 3 : 0)) return false;
    const target = this.queues.head(grant.names.lock)?.handoff as LocalHandoffTarget | undefined;
    if (!target?.accepts(grant)) return false;
    // The cohort ends here (its bounds, or a Redis lease that cannot cover a fixed-lease successor,
    // which also happens once its time budget is spent): other processes' waiters go first.
    const covered =
      grant.watchdog || fixedLeaseCovered(cohort.redisExpiresAt - now, target.leaseMs, this.cohort);
    if (!covered || !cohort.canPass(now, this.cohort)) {
      grant.yieldOnEnd = this.cohort.yieldMs;
      return false;
    }
    const successor = grant.successor(cohort.takeToken(), now, target.options, target.leaseMs);
    const handle = new GrantHandle(successor, cohort.holdId);
    this.add(successor); // first, so the watchdog never sees the lock without a grant
    grant.end();
    this.onReleased(grant, 'released');
    target.receive(handle);
    return true;
  }

  /** Stops every timer: the watchdog and the release retries (at shutdown). */
  stopTimers(): void {
    this.stopped = true;
    this.watchdog.stop();
    for (const timer of this.releaseRetries) clearTimeout(timer);
    this.releaseRetries.clear();
  }

  /** @internal */
  onGrantEnded(grant: LockGrant): void {
    if (!this.grants.delete(grant)) return;
    this.watchdog.delete(grant);
    const left = (this.byLock.get(grant.names.lock) ?? 1) - 1;
    if (left > 0) {
      this.byLock.set(grant.names.lock, left);
      return;
    }
    this.byLock.delete(grant.names.lock);
    // Local waiters were not polling Redis meanwhile: tell the head.
    this.queues.notifyFree(grant.names.lock);
  }

  /** @internal */
  onReleased(grant: LockGrant, result: ReleaseResult | 'failed', error?: unknown): void {
    // Local waiters are told in onGrantEnded (they did not poll Redis meanwhile); fairness across
    // processes comes from the cohort bound and the reservation for the longest-waiting process.
    this.events.safeEmit('released', {
      key: grant.key,
      kind: kindName(grant.kind, grant.options),
      fencingToken: grant.fencingToken,
      heldMs: monotonicMs() - grant.grantedAt,
      result,
      error,
    });
  }

  /** @internal */
  retryRelease(grant: LockGrant, hold: HoldRef, untilMonotonic: number): void {
    if (this.stopped) return; // shutting down: the lease ends it
    let delayMs = 100;
    const attempt = () => {
      this.releaseRetries.delete(timer);
      if (this.stopped || monotonicMs() >= untilMonotonic) return; // the lease ends it now
      grant.kind.release(hold).then(
        (result) => this.onReleased(grant, result),
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

  /** @internal */
  onLost(grant: LockGrant, error: LockLostError): void {
    this.events.safeEmit('lost', {
      key: grant.key,
      kind: kindName(grant.kind, grant.options),
      fencingToken: grant.fencingToken,
      heldMs: monotonicMs() - grant.grantedAt,
      reason: error.reason,
      error,
    });
  }

  /** @internal */
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
}

/**
 * Whether a fixed-lease successor can take the lock without a Redis command: its whole lease from
 * now must end before the Redis lease does (`redisLeftMs`, a lower bound), and the Redis lease must
 * not outlast it by more than the cohort budget (a crashed successor must not keep the lock long).
 */
function fixedLeaseCovered(redisLeftMs: number, leaseMs: number, bounds: CohortBounds): boolean {
  return redisLeftMs >= leaseMs && redisLeftMs <= leaseMs + bounds.budgetMs;
}

/** The kind's name in events: mutex, token, read, write, fair or semaphore. */
export function kindName(kind: LockKind, opts: LockOptions): string {
  if (opts.mode) return opts.mode;
  if (opts.fair) return 'fair';
  if (opts.limit !== undefined) return 'semaphore';
  return kind.reentrant ? 'mutex' : 'token';
}
