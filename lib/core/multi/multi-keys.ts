import type { LockOptions } from '../options/lock-options';
import { assertLockKey, lockKeyError } from '../options/validation';
import { describe } from '../errors/message-text';

/**
 * Most keys one multi-key call may name (after de-duplication the limit still counts every member
 * given). Bounds the script's KEYS (two per lock) and the time a single script blocks Redis.
 */
export const MAX_MULTI_KEYS = 64;

/**
 * Validates the keys of a multi-key call before any I/O and returns them de-duplicated and in the
 * one global order every caller uses (UTF-16 code-unit order, as Array.prototype.sort compares).
 * Duplicates are allowed and taken once: `['a', 'a']` locks `a` once.
 */
export function multiLockKeys(keys: unknown): string[] {
  if (!Array.isArray(keys))
    throw lockKeyError('type', `The lock keys must be an array, got ${describe(keys)}`);
  if (keys.length === 0) throw lockKeyError('range', 'The lock keys must not be an empty array');
  if (keys.length > MAX_MULTI_KEYS) {
    throw lockKeyError(
      'range',
      `${keys.length} lock keys were given; at most ${MAX_MULTI_KEYS} may be locked in one call`,
    );
  }
  // Each member read once into a copy; a hole (sparse array) is refused, not skipped.
  const copy: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    if (!Object.prototype.hasOwnProperty.call(keys, i)) {
      throw lockKeyError('type', `The lock keys must not be a sparse array: index ${i} is a hole`);
    }
    const key: unknown = keys[i];
    assertLockKey(key, `lock key at index ${i}`);
    copy.push(key);
  }
  return [...new Set(copy)].sort();
}

/**
 * Options a multi-key call accepts: the reentrant mutex (default) or the token lock
 * (`reentrant: false`). The read-write, fair and semaphore kinds keep waiters or shared holders in
 * Redis that an all-or-none take-and-give-back would have to undo, so they are refused here.
 */
export function assertMultiKeyOptions(opts: LockOptions): void {
  const refused = (['mode', 'fair', 'limit', 'permits'] as const).find(
    (name) => (opts as Record<string, unknown>)[name] !== undefined,
  );
  if (refused) {
    throw new TypeError(
      `The "${refused}" option cannot be used with several keys: a multi-key lock is a reentrant mutex ` +
        '(default) or a token lock (reentrant: false) on every key',
    );
  }
}
