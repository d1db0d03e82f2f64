import { createHmac, randomBytes } from 'node:crypto';
import { LOCK_ATTRIBUTES } from './lock-metric-names';

/**
 * How a lock key appears on spans: `hash` (default) a 16-hex-digit HMAC-SHA-256 of the key under a
 * secret (see LockKeySecret) that correlates spans of one key without revealing it; `raw` the key
 * itself (may carry user data: opt in); `none` no key; or a function, e.g. one that maps
 * `seckill:42` to its template `seckill:{0}`.
 */
export type LockKeyAttribute = 'hash' | 'raw' | 'none' | ((key: string) => string | undefined);

/**
 * The secret of `hash` key attributes: at least 16 characters or bytes. Give every replica of an
 * app the same one (from its secret store) to correlate a key's spans across them; without it each
 * process draws a random one, so hashes correlate within one process only. An unkeyed hash of a
 * guessable key (an e-mail address, an order number) could be reversed by trying candidates.
 */
export type LockKeySecret = string | Uint8Array;

/** The shortest secret accepted, in characters or bytes. */
export const MIN_KEY_SECRET_LENGTH = 16;

let processSecret: Uint8Array | undefined;

/** This process' random secret, drawn on first use (never exported, never logged). */
function processKeySecret(): Uint8Array {
  return (processSecret ??= randomBytes(32));
}

/** The attribute name and value for `key` under `mode`, or undefined for none. */
export function keyAttribute(
  mode: LockKeyAttribute,
  key: string,
  secret?: LockKeySecret,
): [string, string] | undefined {
  if (mode === 'none') return undefined;
  if (mode === 'raw') return [LOCK_ATTRIBUTES.key, key];
  if (mode === 'hash') return [LOCK_ATTRIBUTES.keyHash, hashKey(key, secret)];
  const label = mode(key);
  return label === undefined ? undefined : [LOCK_ATTRIBUTES.key, label];
}

/**
 * The first 16 hex digits of the key's HMAC-SHA-256 under `secret` (default: this process' random
 * secret): stable wherever the secret is shared, not reversible without it.
 */
export function hashKey(key: string, secret: LockKeySecret = processKeySecret()): string {
  return createHmac('sha256', secret).update(key).digest('hex').slice(0, 16);
}

/** Checks a `key` option (TypeError on anything else). */
export function assertKeyAttribute(value: unknown, option: string): asserts value is LockKeyAttribute {
  if (value === 'hash' || value === 'raw' || value === 'none' || typeof value === 'function') return;
  throw new TypeError(
    `${option} must be 'hash', 'raw', 'none' or a function (key) => string; got ${String(value)}`,
  );
}

/** Checks a `keySecret` option: a string or bytes, at least 16 long. */
export function assertKeySecret(value: unknown, option: string): asserts value is LockKeySecret {
  if (typeof value !== 'string' && !(value instanceof Uint8Array)) {
    throw new TypeError(`${option} must be a string or a Uint8Array, got ${typeof value}`);
  }
  if (value.length < MIN_KEY_SECRET_LENGTH) {
    throw new RangeError(
      `${option} must be at least ${MIN_KEY_SECRET_LENGTH} characters or bytes long, got ${value.length}`,
    );
  }
}
