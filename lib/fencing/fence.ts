import { randomBytes } from 'node:crypto';
import type { LockHandle, MultiLockHandle } from '../core/public';

/**
 * What a fenced write carries: the resource key (for messages), the lock's fencing token and the
 * owner id of the grant. With `signal`, helpers refuse to write once the lock is known lost.
 */
export interface Fence {
  /** The lock key (used in error messages; the resource itself is named by the write). */
  readonly key: string;
  /** The grant's fencing token: a positive safe integer, or a bigint. */
  readonly token: number | bigint;
  /** Who wrote: the same grant writes with the same owner, every other grant with another. */
  readonly owner: string;
  /** The lock's signal; a helper given an aborted one throws its reason before any I/O. */
  readonly signal?: AbortSignal;
}

/** A fence, or a lock handle to take one from with {@link fenceOf}. */
export type FenceSource = Fence | LockHandle;

/** Anything with the lock service's `current(key?)`: DistributedLockService or the core LockEngine. */
export interface CurrentLockSource {
  current(key?: string): LockHandle | undefined;
}

/** The longest owner id the helpers accept (the SQL snippet's column is TEXT; keep ids short). */
export const MAX_FENCE_OWNER_LENGTH = 200;

// One owner id per grant. Re-entrant holds of one grant share its signal (and its token), so the
// signal identifies the grant; a WeakMap lets the id go with the grant.
const ownerByGrant = new WeakMap<AbortSignal, string>();

function ownerOf(signal: AbortSignal): string {
  let owner = ownerByGrant.get(signal);
  if (owner === undefined) {
    owner = `${process.pid}.${randomBytes(9).toString('base64url')}`;
    ownerByGrant.set(signal, owner);
  }
  return owner;
}

function isMulti(lock: LockHandle | MultiLockHandle): lock is MultiLockHandle {
  return Array.isArray((lock as MultiLockHandle).keys);
}

/**
 * The fence of a held lock: its key, fencing token, an owner id unique to the grant (re-entrant
 * holds of one grant get the same id) and its signal. For a multi-key lock, name the `key`.
 */
export function fenceOf(lock: LockHandle | MultiLockHandle, key?: string): Fence {
  if (isMulti(lock)) {
    const k = key ?? (lock.keys.length === 1 ? lock.keys[0] : undefined);
    if (k === undefined || !Object.prototype.hasOwnProperty.call(lock.fencingTokens, k)) {
      throw new TypeError(
        `fenceOf(multiLock, key): key must be one of ${JSON.stringify(lock.keys)}, got ${JSON.stringify(key)}`,
      );
    }
    return { key: k, token: lock.fencingTokens[k]!, owner: ownerOf(lock.signal), signal: lock.signal };
  }
  if (key !== undefined && key !== lock.key) {
    throw new TypeError(
      `fenceOf(lock, key): the lock is ${JSON.stringify(lock.key)}, not ${JSON.stringify(key)}`,
    );
  }
  return { key: lock.key, token: lock.fencingToken, owner: ownerOf(lock.signal), signal: lock.signal };
}

/**
 * The fence of the lock this async context holds (inside a `@DistributedLock` method or `using()`),
 * for `key` or the innermost one. Throws when no lock is held here: a write that should be fenced
 * must not run unfenced.
 */
export function currentFence(locks: CurrentLockSource, key?: string): Fence {
  const lock = locks.current(key);
  if (!lock) {
    throw new Error(
      `currentFence(${key === undefined ? '' : JSON.stringify(key)}): this async context holds no lock` +
        `${key === undefined ? '' : ` on ${JSON.stringify(key)}`}; call it inside a @DistributedLock method or using()`,
    );
  }
  return fenceOf(lock);
}

/** The fencing token as a bigint (tokens fit a number until the year 2255; BIGINT columns take either). */
export function fenceTokenBigInt(source: FenceSource): bigint {
  return BigInt(toFence(source).token);
}

/** Checks a fence (or takes one from a handle) before any I/O; throws the signal's reason once the lock is lost. */
export function toFence(source: FenceSource): Fence {
  if (source === null || typeof source !== 'object') {
    throw new TypeError(`fence must be a lock handle or { key, token, owner }, got ${typeof source}`);
  }
  const fence = 'fencingToken' in source ? fenceOf(source) : source;
  const { key, token, owner } = fence;
  if (typeof key !== 'string' || key === '') throw new TypeError('fence.key must be a non-empty string');
  const validNumber = typeof token === 'number' && Number.isSafeInteger(token) && token > 0;
  const validBigInt = typeof token === 'bigint' && token > 0n && token < 2n ** 63n;
  if (!validNumber && !validBigInt) {
    throw new RangeError(
      `fence.token must be a positive safe integer or a bigint below 2^63, got ${String(token)}`,
    );
  }
  if (typeof owner !== 'string' || owner === '' || owner.length > MAX_FENCE_OWNER_LENGTH) {
    throw new TypeError(`fence.owner must be a string of 1 to ${MAX_FENCE_OWNER_LENGTH} characters`);
  }
  if (fence.signal?.aborted) throw fence.signal.reason;
  return fence;
}
