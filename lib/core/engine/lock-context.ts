import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import type { LockHandle } from './lock-grant';

/*
 * Ownership: the unguessable ids that name an owner and a hold in Redis, and the async context that
 * holds locks in this process.
 */

const ID_BYTES = 20;
const POOL_IDS = 256;
let pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let offset = pool.length;

/**
 * An unguessable id (20 random bytes = 160 bits, base64url): owner tokens and hold ids. The bytes
 * come from the CSPRNG in pooled batches (one randomFillSync per 256 ids), which costs a fraction
 * of a randomBytes(20) call per id on the hot path of every acquire.
 */
export function randomId(): string {
  if (offset + ID_BYTES > pool.length) {
    // A fresh buffer each refill: ids already handed out were copied into strings, never reused.
    pool = randomFillSync(Buffer.allocUnsafe(ID_BYTES * POOL_IDS));
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

/**
 * Ownership by async context. Node has no thread id, so the owner of a lock is the async call tree
 * of its critical section: `using()` and decorated methods run their body in a new frame that maps
 * the lock to its handle. Frames are immutable and only created at that boundary, so sibling calls
 * started outside the critical section never see the lock, while everything inside it does.
 */
interface LockFrame {
  readonly held: ReadonlyMap<string, LockHandle>;
  readonly innermost?: LockHandle;
}

const storage = new AsyncLocalStorage<LockFrame>();

/** Runs `fn` inside the critical section of `handle` (scope key: engine id + lock name). */
export function runInLockScope<T>(scopeKey: string, handle: LockHandle, fn: () => T): T {
  const parent = storage.getStore();
  const held = new Map(parent?.held);
  held.set(scopeKey, handle);
  return storage.run({ held, innermost: handle }, fn);
}

/**
 * The handle this async context holds for lock `lockName` of engine `engineId`, if any (it may since
 * have been released). Outside every critical section it costs one lookup and builds no string.
 */
export function heldInScope(engineId: string, lockName: string): LockHandle | undefined {
  const frame = storage.getStore();
  return frame?.held.get(`${engineId}|${lockName}`);
}

/** The innermost lock of this async context, or the one for a scope key. */
export function currentInScope(
  filter?: (scopeKey: string, handle: LockHandle) => boolean,
): LockHandle | undefined {
  const frame = storage.getStore();
  if (!frame) return undefined;
  if (!filter) return frame.innermost;
  let found: LockHandle | undefined;
  for (const [k, h] of frame.held) if (filter(k, h)) found = h; // later entries are inner scopes
  return found;
}
