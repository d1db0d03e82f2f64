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

/** The Redis grant a cohort starts from. */
export interface CohortOpening {
  readonly holdId: string;
  readonly grantedToken: number;
  /** Tokens the grant reserved, its own included. */
  readonly reservedTokens: number;
  /** Monotonic time the granting request was sent. */
  readonly requestedAt: number;
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
 * own grant, which the Redis lease must cover (see HeldLocks.handOff).
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

  constructor(opening: CohortOpening) {
    this.holdId = opening.holdId;
    // The Redis grant took `grantedToken` and reserved the ones after it for the hand-offs.
    this.nextToken = opening.grantedToken + 1;
    this.lastToken = opening.grantedToken + opening.reservedTokens - 1;
    this.startedAt = opening.requestedAt;
    this.redisExpiresAt = opening.requestedAt + opening.redisLeaseMs;
  }

  /** Whether one more local hand-off is allowed at `now`. */
  canPass(now: number, bounds: CohortBounds): boolean {
    return (
      this.passes < bounds.passes &&
      this.nextToken <= this.lastToken &&
      now - this.startedAt < bounds.budgetMs
    );
  }

  /** The fencing token of the next local holder. */
  takeToken(): number {
    this.passes++;
    return this.nextToken++;
  }
}
