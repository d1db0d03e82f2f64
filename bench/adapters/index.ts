import type { BenchLock } from './bench-lock';

/** Library ids, in the order they appear in tables (ours first, the baseline last). */
export const LIBRARY_IDS = [
  'nestjs-distributed-lock',
  'redlock',
  'sesamecare-redlock',
  'redis-semaphore',
  'redlock-universal',
  'node-redisson',
  'raw-baseline',
] as const;

/**
 * Extra rows, in a run without --only (or with `--fair` / `--registry`): this library's fair lock,
 * and this library without the inspection registry (the reference for its overhead).
 */
export const EXTRA_IDS = ['nestjs-distributed-lock-fair', 'nestjs-distributed-lock-no-registry'] as const;

/** One of LIBRARY_IDS or EXTRA_IDS. */
export type LibraryId = (typeof LIBRARY_IDS)[number] | (typeof EXTRA_IDS)[number];

/** Our library's id, the one the targets are about. */
export const OURS: LibraryId = 'nestjs-distributed-lock';
/** This library with `fair: true`. */
export const FAIR: LibraryId = 'nestjs-distributed-lock-fair';
/** This library with `inspection: false` (no registry of held locks). */
export const NO_REGISTRY: LibraryId = 'nestjs-distributed-lock-no-registry';
/** Every row that is this library in some form (not a peer). */
export const OUR_ROWS: readonly LibraryId[] = [OURS, FAIR, NO_REGISTRY];
/** The hand-written SET NX PX baseline. */
export const RAW: LibraryId = 'raw-baseline';

/**
 * Loads only the adapter asked for (each worker process drives one library, so peers' modules,
 * timers and connections never share a process with another library's).
 */
export async function createAdapter(id: LibraryId, redisUrl: string): Promise<BenchLock> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(`./${id}`) as { create: (url: string) => BenchLock | Promise<BenchLock> };
  return mod.create(redisUrl);
}

/** True for a known library id. */
export function isLibraryId(value: string): value is LibraryId {
  return [...LIBRARY_IDS, ...EXTRA_IDS].includes(value as LibraryId);
}
