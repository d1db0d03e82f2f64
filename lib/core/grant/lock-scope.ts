import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockHandle } from './grant-handle';

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
