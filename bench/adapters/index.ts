import { BENCH_LEASE_MS, type BenchLock } from './bench-lock';

/**
 * Library ids, in the order they appear in tables (ours first, the baseline last). An id ending in
 * `+lease` is the same adapter with a fixed lease of BENCH_LEASE_MS for every acquisition (for the
 * libraries that renew a lease by default); redlock, redlock-universal and the raw baseline only
 * have fixed leases, and use BENCH_LEASE_MS too.
 */
export const LIBRARY_IDS = [
  'nestjs-distributed-lock',
  'nestjs-distributed-lock+lease',
  'redlock',
  'sesamecare-redlock',
  'redis-semaphore',
  'redis-semaphore+lease',
  'redlock-universal',
  'node-redisson',
  'node-redisson+lease',
  'raw-baseline',
] as const;

/**
 * Extra rows (run without --only; `--fair` / `--registry` add two of them to an --only run): this
 * library's fair lock with and without a lease, this library through the Nest DistributedLockService
 * (uncontended part only), this library without the inspection registry (its overhead's reference), and
 * this library on a node-redis 6 and on a Valkey GLIDE client (issue 26), with and without a lease.
 */
export const EXTRA_IDS = [
  'nestjs-distributed-lock-fair',
  'nestjs-distributed-lock-fair+lease',
  'nestjs-distributed-lock-fair-cohorts',
  'nestjs-distributed-lock-service',
  'nestjs-distributed-lock-service+lease',
  'nestjs-distributed-lock-no-registry',
  'nestjs-distributed-lock-node-redis',
  'nestjs-distributed-lock-node-redis+lease',
  'nestjs-distributed-lock-glide',
  'nestjs-distributed-lock-glide+lease',
  'nestjs-distributed-lock-before',
  'nestjs-distributed-lock-before+lease',
] as const;

/** One of LIBRARY_IDS or EXTRA_IDS. */
export type LibraryId = (typeof LIBRARY_IDS)[number] | (typeof EXTRA_IDS)[number];

/** Our library's id, the one the targets are about. */
export const OURS: LibraryId = 'nestjs-distributed-lock';
/** Our library with a fixed lease. */
export const OURS_LEASE: LibraryId = 'nestjs-distributed-lock+lease';
/** This library with `fair: true`. */
export const FAIR: LibraryId = 'nestjs-distributed-lock-fair';
/** This library with `inspection: false` (no registry of held locks). */
export const NO_REGISTRY: LibraryId = 'nestjs-distributed-lock-no-registry';
/** This library with `fair: true` and fair cohorts (`cohort: { fair: true }`, opt-in). */
export const FAIR_COHORTS: LibraryId = 'nestjs-distributed-lock-fair-cohorts';
/** This library with `fair: true` and a fixed lease. */
export const FAIR_LEASE: LibraryId = 'nestjs-distributed-lock-fair+lease';
/** This library through the Nest service (uncontended rows only). */
export const SERVICE: LibraryId = 'nestjs-distributed-lock-service';
/** This library through the Nest service, fixed lease. */
export const SERVICE_LEASE: LibraryId = 'nestjs-distributed-lock-service+lease';
/** This library on a node-redis 6 client (`createClient`), and on a Valkey GLIDE client. */
export const NODE_REDIS: LibraryId = 'nestjs-distributed-lock-node-redis';
export const NODE_REDIS_LEASE: LibraryId = 'nestjs-distributed-lock-node-redis+lease';
export const GLIDE: LibraryId = 'nestjs-distributed-lock-glide';
export const GLIDE_LEASE: LibraryId = 'nestjs-distributed-lock-glide+lease';
/** Rows measured in the uncontended part only. */
export const UNCONTENDED_ONLY: readonly LibraryId[] = [SERVICE, SERVICE_LEASE];
/** Every row that is this library in some form (not a peer). */
export const OUR_ROWS: readonly LibraryId[] = [
  'nestjs-distributed-lock-before',
  'nestjs-distributed-lock-before+lease',
  OURS,
  OURS_LEASE,
  FAIR,
  FAIR_LEASE,
  FAIR_COHORTS,
  SERVICE,
  SERVICE_LEASE,
  NO_REGISTRY,
  NODE_REDIS,
  NODE_REDIS_LEASE,
  GLIDE,
  GLIDE_LEASE,
];
/** An earlier release of this library (`--before=DIR`), side by side with today's. */
export const BEFORE_IDS: readonly LibraryId[] = [
  'nestjs-distributed-lock-before',
  'nestjs-distributed-lock-before+lease',
];
/** The hand-written SET NX PX baseline. */
export const RAW: LibraryId = 'raw-baseline';

/**
 * Loads only the adapter asked for (each worker process drives one library, so peers' modules,
 * timers and connections never share a process with another library's).
 */
export async function createAdapter(id: LibraryId, redisUrl: string): Promise<BenchLock> {
  const fixed = id.endsWith('+lease');
  const file = fixed ? id.slice(0, -'+lease'.length) : id;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(`./${file}`) as {
    create: (url: string, settings: { leaseMs?: number }) => BenchLock | Promise<BenchLock>;
  };
  return mod.create(redisUrl, fixed ? { leaseMs: BENCH_LEASE_MS } : {});
}

/** True for a known library id. */
export function isLibraryId(value: string): value is LibraryId {
  return [...LIBRARY_IDS, ...EXTRA_IDS].includes(value as LibraryId);
}
