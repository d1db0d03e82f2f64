/** What a caller may ask of one acquisition. Every field is optional; defaults come from the client. */
export interface LockOptions {
  /** How long to wait for a busy lock, in ms. `0` makes one attempt. Default: client `defaults.waitMs` (10 000). */
  waitMs?: number;
  /** Fixed lease in ms: the lock ends then. Omitted: the watchdog keeps it alive while held. */
  leaseMs?: number;
  /** Cancels the wait at once (rejects with the signal's reason); an already-aborted signal sends nothing. */
  signal?: AbortSignal;
  /** Default true. `false` is the plain token lock (SET NX PX + compare-and-delete). */
  reentrant?: boolean;
  /** Read-write lock: many readers or one writer per key. */
  mode?: 'read' | 'write';
  /** FIFO order across processes. */
  fair?: boolean;
  /** Counting semaphore: at most `limit` holders at once. */
  limit?: number;
  /**
   * With `limit`: take this many permits at once (all or none, never more than `limit` in use),
   * given back together on release. Default 1; 1 <= permits <= limit.
   */
  permits?: number;
  /**
   * The lock is kept at least this long from its grant, even when released sooner (ShedLock's
   * lockAtLeastFor): a replica whose timer fires late, or whose clock is behind, finds it still held.
   */
  minHoldMs?: number;
  /**
   * The watchdog stops renewing this long after the grant (ShedLock's lockAtMostFor): the lock ends
   * then and the handle's signal aborts with LockLostError reason 'max-hold'.
   */
  maxHoldMs?: number;
}

/** The names LockOptions accepts; anything else is refused with a message naming it. */
export const LOCK_OPTION_NAMES: readonly (keyof LockOptions)[] = [
  'waitMs',
  'leaseMs',
  'signal',
  'reentrant',
  'mode',
  'fair',
  'limit',
  'permits',
  'minHoldMs',
  'maxHoldMs',
];

/** Tuning of the engine; every field has a documented default (see DEFAULT_ENGINE_OPTIONS). */
export interface LockEngineOptions {
  /** Prefix of every Redis key and channel the library writes. Default `'lock:'`. No braces. */
  keyPrefix?: string;
  /** Defaults applied to each acquisition. */
  defaults?: { waitMs?: number; leaseMs?: number };
  /** Lease the watchdog keeps renewing when no `leaseMs` is given. Default 30 000 (Redisson's). */
  watchdogLeaseMs?: number;
  /** Watchdog period. Default `watchdogLeaseMs / 3`. */
  renewEveryMs?: number;
  /** Safety-net polling while waiting: exponential from `initialMs` doubling up to `maxMs`. Default 1 → 128. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long the fencing counter of an idle key is kept. Default 86 400 000 (24 h). */
  fenceTtlMs?: number;
  /** Each Redis command settles within this time or fails with LockRedisError. Default 5 000. */
  commandTimeoutMs?: number;
  /**
   * Replica acknowledgement of each grant with `WAIT` (Sentinel, a replicated master, or a Cluster).
   * Default: off. `{}` means `{ count: 1, timeoutMs: 1000, policy: 'report' }`.
   */
  replicas?: ReplicaAckOptions;
  /**
   * close() first waits up to this long for running critical sections (using() and decorated
   * methods) to finish, their locks still renewed; new acquisitions are refused meanwhile.
   * Default 0 for the plain engine; the Nest module defaults it to 10 000.
   */
  drainMs?: number;
  /**
   * Per-process cohorts for the reentrant mutex and the token lock under the watchdog: a release
   * hands the lock to the next waiter of the same process without a Redis round trip, at most
   * `passes` times (default 32) within `budgetMs` (default 50) of the Redis grant; then it is released
   * for real and, when other processes wait, reserved for up to `yieldMs` (default 100) for the one that
   * has waited longest, so processes take turns.
   * `fair: true` (default false) gives the fair lock cohorts too: one Redis queue entry per process,
   * FIFO across processes by the arrival of each process' entry, FIFO within the process, local
   * hand-offs within the same bounds (docs/GUARANTEES.md).
   * `false` turns cohorts off.
   */
  cohort?: false | { passes?: number; budgetMs?: number; yieldMs?: number; fair?: boolean };
  /**
   * The name this engine's holders and waiters carry in inspect() / list() and the console. Default:
   * the app's package name (`npm_package_name`, or the working directory's package.json), else the host.
   */
  app?: string;
  /**
   * Default true: the engine keeps its entry in the registry of held locks (so list() shows its
   * locks) and listens for force-release notices. `false`: neither (inspect() still sees its locks;
   * a force release reaches it only at its next renewal).
   */
  inspection?: boolean;
  /**
   * Callers of this process that may wait for one key at once (default 10 000). A caller beyond it
   * fails at once with LockNotAcquiredError (423 at HTTP) instead of queueing, so a flood of requests
   * on one busy key cannot stall the process.
   */
  maxWaitersPerKey?: number;
}

/** `WAIT count timeoutMs` after each grant; see docs/TOPOLOGIES.md. */
export interface ReplicaAckOptions {
  /** Replicas that should acknowledge the grant. Default 1. */
  count?: number;
  /** How long WAIT may block the connection. Default 1 000. */
  timeoutMs?: number;
  /**
   * `'report'` (default): keep the lock, expose the count on `handle.replicaAcks` and the `acquired`
   * event. `'require'`: release the grant and fail with LockReplicationError when fewer acknowledged.
   */
  policy?: 'report' | 'require';
}

/** The names LockEngineOptions accepts. */
export const ENGINE_OPTION_NAMES: readonly (keyof LockEngineOptions)[] = [
  'keyPrefix',
  'defaults',
  'watchdogLeaseMs',
  'renewEveryMs',
  'backoff',
  'fenceTtlMs',
  'commandTimeoutMs',
  'replicas',
  'drainMs',
  'cohort',
  'app',
  'inspection',
  'maxWaitersPerKey',
];

/** Engine options with every default filled in. */
export interface ResolvedEngineOptions {
  keyPrefix: string;
  defaults: { waitMs: number; leaseMs: number | undefined };
  watchdogLeaseMs: number;
  renewEveryMs: number;
  backoff: { initialMs: number; maxMs: number };
  fenceTtlMs: number;
  commandTimeoutMs: number;
  /** Undefined: no WAIT. */
  replicas?: Required<ReplicaAckOptions>;
  drainMs: number;
  /** False: no cohorts. */
  cohort: CohortBounds | false;
  /** Undefined: the default (see LockEngineOptions.app). */
  app?: string;
  /** Whether the engine joins the registry of held locks. */
  inspection: boolean;
  maxWaitersPerKey: number;
}

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

/** Longest user key accepted, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 512;
/** Longest duration accepted (setTimeout's limit), in ms. */
export const MAX_DURATION_MS = 2_147_483_647;

export const DEFAULT_ENGINE_OPTIONS: ResolvedEngineOptions = {
  keyPrefix: 'lock:',
  defaults: { waitMs: 10_000, leaseMs: undefined },
  watchdogLeaseMs: 30_000,
  renewEveryMs: 10_000,
  backoff: { initialMs: 1, maxMs: 128 },
  fenceTtlMs: 86_400_000,
  commandTimeoutMs: 5_000,
  drainMs: 0,
  cohort: DEFAULT_COHORT_BOUNDS,
  inspection: true,
  maxWaitersPerKey: 10_000,
};
