/**
 * The one interface every library is driven through, so each scenario is written once.
 * `acquire` waits up to `waitMs` and resolves to the matching release; it rejects when the
 * library gave up (that counts as a failed acquisition).
 */
export interface BenchLock {
  /** Display name: the npm package (or "raw baseline"). */
  readonly name: string;
  /** Takes `key`, waiting at most `waitMs`; resolves to a function that releases it. */
  acquire(key: string, waitMs: number): Promise<Release>;
  /** Extra library-specific counters for profiling (e.g. attempts), if the library exposes any. */
  metrics?(): Record<string, number>;
  /** Closes every connection the adapter opened. */
  close(): Promise<void>;
}

/** Releases what `acquire` took. */
export type Release = () => Promise<unknown>;

/**
 * How an adapter is built: `leaseMs` set = every acquisition asks for that fixed lease (no
 * renewal); unset = the library's own renewed lease (watchdog), for the libraries that have one.
 */
export interface BenchLockSettings {
  readonly leaseMs?: number;
}

/** Builds an adapter connected to `redisUrl`. */
export type BenchLockFactory = (
  redisUrl: string,
  settings: BenchLockSettings,
) => BenchLock | Promise<BenchLock>;

/**
 * The fixed lease every library gets in the fixed-lease rows, and the lease of the libraries that
 * only have fixed leases (redlock, redlock-universal, the raw baseline): the same for all.
 */
export const BENCH_LEASE_MS = 10_000;

/** Row name suffix: a fixed lease, or the library's watchdog. */
export function leaseLabel(settings: BenchLockSettings): string {
  return settings.leaseMs === undefined ? ' (watchdog)' : ` (leaseMs ${settings.leaseMs / 1000} s)`;
}
