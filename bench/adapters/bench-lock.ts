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

/** Builds an adapter connected to `redisUrl`. */
export type BenchLockFactory = (redisUrl: string) => BenchLock | Promise<BenchLock>;

/** The lease every adapter asks for when its library needs one (Redisson's watchdog lease). */
export const BENCH_LEASE_MS = 30_000;
