import { createHash } from 'node:crypto';
import { LOCK_ATTRIBUTES } from './lock-metric-names';

/**
 * How a lock key appears on spans: `hash` (default) a 16-hex-digit SHA-256 prefix that correlates
 * spans of one key without revealing it; `raw` the key itself (may carry user data: opt in);
 * `none` no key; or a function, e.g. one that maps `seckill:42` to its template `seckill:{0}`.
 */
export type LockKeyAttribute = 'hash' | 'raw' | 'none' | ((key: string) => string | undefined);

/** The attribute name and value for `key` under `mode`, or undefined for none. */
export function keyAttribute(mode: LockKeyAttribute, key: string): [string, string] | undefined {
  if (mode === 'none') return undefined;
  if (mode === 'raw') return [LOCK_ATTRIBUTES.key, key];
  if (mode === 'hash') return [LOCK_ATTRIBUTES.keyHash, hashKey(key)];
  const label = mode(key);
  return label === undefined ? undefined : [LOCK_ATTRIBUTES.key, label];
}

/** The first 16 hex digits of the key's SHA-256: stable across processes, not reversible in practice. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** Checks a `key` option (TypeError on anything else). */
export function assertKeyAttribute(value: unknown, option: string): asserts value is LockKeyAttribute {
  if (value === 'hash' || value === 'raw' || value === 'none' || typeof value === 'function') return;
  throw new TypeError(
    `${option} must be 'hash', 'raw', 'none' or a function (key) => string; got ${String(value)}`,
  );
}
