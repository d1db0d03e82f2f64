import { MAX_DURATION_MS } from './lock-options';

// Every check runs before any Redis command, so bad input never costs a round trip or leaves state.

/** Refuses NaN, ±Infinity, fractions, negatives, non-numbers, and values below `min` or above setTimeout's limit. */
export function assertDuration(value: unknown, name: string, min = 0): asserts value is number {
  if (typeof value !== 'number') {
    throw new TypeError(`${name} must be a number of milliseconds, got ${describe(value)}`);
  }
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be finite, got ${value}`);
  if (!Number.isInteger(value))
    throw new RangeError(`${name} must be a whole number of milliseconds, got ${value}`);
  if (value < min) throw new RangeError(`${name} must be at least ${min}, got ${value}`);
  if (value > MAX_DURATION_MS)
    throw new RangeError(`${name} must be at most ${MAX_DURATION_MS}, got ${value}`);
}

/** Throws a TypeError naming the first option that is not in `known`. */
export function assertKnownNames(
  obj: Record<string, unknown>,
  known: readonly string[],
  where: string,
): void {
  if (obj === null || typeof obj !== 'object')
    throw new TypeError(`The ${where} must be an object, got ${describe(obj)}`);
  for (const name of Object.keys(obj)) {
    if (!known.includes(name)) {
      throw new TypeError(`Unknown option "${name}" in ${where}; known options: ${known.join(', ')}`);
    }
  }
}

/** True for an AbortSignal (of this realm). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  return typeof AbortSignal !== 'undefined' && value instanceof AbortSignal;
}

/**
 * `text` in double quotes with every control character (C0, DEL, C1, U+2028/U+2029), quote and
 * backslash escaped: a key or any user text in a message or log line can never start a new line or
 * forge an entry. The one place messages quote keys.
 */
export function quoteKey(text: string): string {
  return JSON.stringify(String(text)).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** `text` with control characters escaped as in quoteKey, without the quotes (for log lines). */
export function printable(text: string): string {
  return quoteKey(text).slice(1, -1);
}

/** A short, safe description of a value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${quoteKey(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  return `${typeof value} ${String(value)}`;
}
