import { MAX_KEY_BYTES } from './lock-options';
import { describe } from './validation';

// Every check runs before any Redis command, so bad input never costs a round trip or leaves state.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `code` of the TypeError/RangeError a bad lock key gets (at the HTTP boundary: a 400). */
export const INVALID_LOCK_KEY = 'ERR_INVALID_LOCK_KEY';

/** A TypeError or RangeError marked as a bad lock key (`code` INVALID_LOCK_KEY). */
export function lockKeyError(type: 'type' | 'range', message: string): TypeError | RangeError {
  const error = type === 'type' ? new TypeError(message) : new RangeError(message);
  return Object.assign(error, { code: INVALID_LOCK_KEY });
}

/** True for an error thrown because a lock key (or a key built from arguments) was refused. */
export function isLockKeyError(error: unknown): error is (TypeError | RangeError) & { code: string } {
  return error instanceof Error && (error as { code?: unknown }).code === INVALID_LOCK_KEY;
}

/**
 * Refuses anything but a non-empty, well-formed string (no lone UTF-16 surrogate: two such keys
 * would turn into the same bytes) of at most MAX_KEY_BYTES UTF-8 bytes.
 */
export function assertLockKey(key: unknown, what = 'lock key'): asserts key is string {
  if (typeof key !== 'string')
    throw lockKeyError('type', `The ${what} must be a string, got ${describe(key)}`);
  if (key.length === 0) throw lockKeyError('range', `The ${what} must not be empty`);
  if (LONE_SURROGATE.test(key)) {
    throw lockKeyError('range', `The ${what} contains a lone UTF-16 surrogate, which has no UTF-8 form`);
  }
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_KEY_BYTES) {
    throw lockKeyError(
      'range',
      `The ${what} is ${bytes} bytes long; at most ${MAX_KEY_BYTES} bytes are allowed`,
    );
  }
}
