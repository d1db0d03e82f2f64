import type { CohortBounds, LockOptions } from '../options/lock-options';

/** A grant of a cohort, as the hand-off reads it (a LockGrant). */
export interface CohortGrant {
  readonly options: LockOptions;
  /** Monotonic time at which its lease runs out unless renewed. */
  readonly expiresAt: number;
  readonly leaseMs: number;
  readonly watchdog: boolean;
}

/** A hand-off the bounds allow: the successor's token and lease, counted from `requestedAt`. */
export interface CohortTurn {
  readonly fencingToken: number;
  readonly leaseMs: number;
  readonly requestedAt: number;
}

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
   * The last hold of `grant` (a grant of this cohort) is being released at `now`: whether `next`,
   * this process' head waiter, may take the lock without a Redis round trip. The successor's turn when
   * the bounds allow it and the lease is safely alive; 'yield' when the cohort ends here (the release
   * then keeps the lock for another process for `yieldMs`); undefined when the caller must simply
   * release in Redis.
   */
  handOff<G extends CohortGrant>(
    grant: G,
    next: { accepts(grant: G): boolean; readonly handoffRequest: { readonly leaseMs: number } },
    now: number,
    bounds: CohortBounds,
  ): CohortTurn | 'yield' | undefined {
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
    if (!covered || !canPass) return 'yield';
    this.passes++;
    // A watchdog successor keeps the lease end; a fixed-lease one gets its own `leaseMs` from `now`
    // (covered, above).
    return {
      fencingToken: this.nextToken++,
      leaseMs: grant.watchdog ? grant.leaseMs : wanted.leaseMs,
      requestedAt: grant.watchdog ? grant.expiresAt - grant.leaseMs : now,
    };
  }
}
