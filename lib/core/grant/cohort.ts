import type { Waiter } from '../waiting/waiter';
import { GrantHandle, LockGrant } from './lock-grant';

/** Bounds of a per-process cohort (see Cohort), resolved. */
export interface CohortBounds {
  /** Local hand-offs after one Redis grant before the lock is released for real. */
  readonly passes: number;
  /** Time from the Redis grant after which no more local hand-offs are made (ms). */
  readonly budgetMs: number;
  /**
   * A cohort that ends at its bound while other processes wait keeps the released lock from this
   * process' owners for up to this long (ms), so those waiters go first.
   */
  readonly yieldMs: number;
  /**
   * Fair cohorts: the fair lock queues one entry per process in Redis and hands over locally too
   * (order across processes by the arrival of each process' entry). Off by default: the fair lock
   * then keeps one entry per waiter (exact order per waiter).
   */
  readonly fair?: boolean;
}

/** Default cohort bounds: at most 32 local hand-offs within 50 ms, then up to 100 ms reserved for another process. */
export const DEFAULT_COHORT_BOUNDS: CohortBounds = { passes: 32, budgetMs: 50, yieldMs: 100, fair: false };

/** Fencing tokens a fresh grant of a cohort kind reserves: its own, plus one per allowed hand-off (1 without cohorts). */
export function cohortTokenBlock(bounds: CohortBounds | false): number {
  return bounds ? bounds.passes + 1 : 1;
}

/**
 * How much more than its `leaseMs` a fixed-lease attempt with local waiters behind it asks Redis for:
 * the cohort's budget, so each local successor's whole lease is covered (0 without cohorts).
 */
export function cohortLeaseExtraMs(bounds: CohortBounds | false): number {
  return bounds ? bounds.budgetMs : 0;
}

/** The Redis grant a cohort starts from. */
export interface CohortOpening {
  /** The hold that keeps the Redis lock while the cohort lasts. */
  readonly holdId: string;
  /** Tokens the grant reserved, its own included. */
  readonly reservedTokens: number;
  /** The lease the grant asked Redis for. */
  readonly redisLeaseMs: number;
}

/**
 * A per-process cohort (lock cohorting, Dice, Marathe & Shavit, PPoPP 2012): the grants that follow
 * one Redis grant by local hand-offs. The Redis lock stays under the cohort's owner id and base hold;
 * each local holder is still a grant of its own (its own signal, async context and fencing token,
 * taken from the block of tokens the Redis grant reserved, so tokens strictly increase across every
 * holder in every process). Bounded by a pass count and a time budget, so other processes get their
 * turn. Watchdog and fixed leases alike: a fixed-lease successor gets its own whole `leaseMs` from its
 * own grant, which the Redis lease must cover (see handOff).
 */
export class Cohort {
  private passes = 0;
  /** The hold that keeps the Redis lock while the cohort lasts. */
  readonly holdId: string;
  private nextToken: number;
  private readonly lastToken: number;
  private readonly startedAt: number;
  /**
   * Monotonic time by which the Redis lock's lease has NOT yet run out (counted from before the
   * request that set it, so Redis' own expiry is later): a fixed-lease hand-off needs its whole
   * lease below it. Moved by every renewal or extend() of a grant of the cohort.
   */
  redisExpiresAt: number;

  constructor(opening: CohortOpening, grantedToken: number, requestedAt: number) {
    this.holdId = opening.holdId;
    // The Redis grant took `grantedToken` and reserved the ones after it for the hand-offs.
    this.nextToken = grantedToken + 1;
    this.lastToken = grantedToken + opening.reservedTokens - 1;
    this.startedAt = requestedAt;
    this.redisExpiresAt = requestedAt + opening.redisLeaseMs;
  }

  /**
   * The last hold of `grant` (a grant of this cohort) is being released at `now`: hands the lock to
   * `next`, this process' head waiter, without a Redis round trip when the bounds allow it and the
   * lease is safely alive. Returns the successor's handle (the caller ends `grant` and gives the
   * handle to `next`), or undefined when the caller must release in Redis.
   */
  handOff(grant: LockGrant, next: Waiter, now: number, bounds: CohortBounds): GrantHandle | undefined {
    if (grant.options.minHoldMs !== undefined || grant.options.maxHoldMs !== undefined) return undefined;
    // Never pass a lease that may be dead (a paused process): a watchdog lease must have a third
    // left; a fixed one must still be alive (and the Redis lease must cover the successor's, below).
    if (now >= grant.expiresAt - (grant.watchdog ? grant.leaseMs / 3 : 0)) return undefined;
    if (!next.accepts(grant)) return undefined;
    const wanted = next.handoffRequest;
    // The cohort ends here (its bounds, or a Redis lease that cannot cover a fixed-lease successor,
    // which also happens once its time budget is spent): other processes' waiters go first.
    const redisLeftMs = this.redisExpiresAt - now;
    const covered =
      grant.watchdog ||
      // A fixed-lease successor's whole lease must end before the Redis lease does, and the Redis
      // lease must not outlast it by more than the budget (a crashed successor must not keep it long).
      (redisLeftMs >= wanted.leaseMs && redisLeftMs <= wanted.leaseMs + bounds.budgetMs);
    const canPass =
      this.passes < bounds.passes &&
      this.nextToken <= this.lastToken &&
      now - this.startedAt < bounds.budgetMs;
    if (!covered || !canPass) {
      grant.yieldOnEnd = bounds.yieldMs;
      return undefined;
    }
    this.passes++;
    // The next holder: the same Redis lock (owner), a new grant with its own token, signal and async
    // context. A watchdog successor keeps the lease end; a fixed-lease one gets its own `leaseMs`
    // from `now` (covered, above).
    const successor = new LockGrant(grant.held, {
      kind: grant.kind,
      key: grant.key,
      names: grant.names,
      owner: grant.owner,
      fencingToken: this.nextToken++,
      options: wanted.options,
      leaseMs: grant.watchdog ? grant.leaseMs : wanted.leaseMs,
      watchdog: grant.watchdog,
      requestedAt: grant.watchdog ? grant.expiresAt - grant.leaseMs : now,
      grantedAt: now,
      // The Redis grant this holder rides on is the one the replicas acknowledged.
      replicaAcks: grant.replicaAcks,
      cohort: this,
    });
    return new GrantHandle(successor, this.holdId);
  }
}
