import { describe } from '../errors/message-text';
import { LOCK_OPTION_NAMES, LockOptions, MAX_DURATION_MS, MAX_KEY_BYTES } from './lock-options';

// Every check of what a caller passes in: lock keys, lock options, durations and option names. Each
// runs before any Redis command, so bad input never costs a round trip or leaves state.

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
    if (!known.includes(name)) throw unknownOption(name, known, where);
  }
}

function unknownOption(name: string, known: readonly string[], where: string): TypeError {
  return new TypeError(`Unknown option "${name}" in ${where}; known options: ${known.join(', ')}`);
}

/** True for an AbortSignal (of this realm). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  return typeof AbortSignal !== 'undefined' && value instanceof AbortSignal;
}

// ---- lock keys ----

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

// ---- lock options ----

/**
 * Refuses unknown option names and malformed values; returns a frozen snapshot of the options (see
 * snapshotOptions): the engine uses that snapshot from then on, never the caller's object.
 */
export function validateLockOptions(options: unknown, where = 'lock options'): LockOptions {
  const opts = snapshotOptions(options, LOCK_OPTION_NAMES as readonly string[], where);
  if (opts.waitMs !== undefined) assertDuration(opts.waitMs, 'waitMs');
  if (opts.leaseMs !== undefined) assertDuration(opts.leaseMs, 'leaseMs', 1);
  if (opts.signal !== undefined && !isAbortSignal(opts.signal)) {
    throw new TypeError(`signal must be an AbortSignal, got ${describe(opts.signal)}`);
  }
  if (opts.reentrant !== undefined && typeof opts.reentrant !== 'boolean') {
    throw new TypeError(`reentrant must be a boolean, got ${describe(opts.reentrant)}`);
  }
  if (opts.fair !== undefined && typeof opts.fair !== 'boolean') {
    throw new TypeError(`fair must be a boolean, got ${describe(opts.fair)}`);
  }
  if (opts.mode !== undefined && opts.mode !== 'read' && opts.mode !== 'write') {
    throw new TypeError(`mode must be 'read' or 'write', got ${describe(opts.mode)}`);
  }
  if (opts.limit !== undefined) {
    if (typeof opts.limit !== 'number')
      throw new TypeError(`limit must be a number, got ${describe(opts.limit)}`);
    if (!Number.isInteger(opts.limit) || opts.limit < 1 || opts.limit > 1_000_000) {
      throw new RangeError(`limit must be a whole number from 1 to 1000000, got ${opts.limit}`);
    }
  }
  if (opts.permits !== undefined) assertPermits(opts.permits, opts.limit);
  if (opts.minHoldMs !== undefined) assertDuration(opts.minHoldMs, 'minHoldMs');
  if (opts.maxHoldMs !== undefined) assertDuration(opts.maxHoldMs, 'maxHoldMs', 1);
  assertHoldBounds(opts as LockOptions);
  const kinds = [opts.mode !== undefined, opts.fair === true, opts.limit !== undefined].filter(
    Boolean,
  ).length;
  if (kinds > 1) {
    throw new TypeError(
      `mode, fair and limit choose different lock kinds; use at most one of them (${where})`,
    );
  }
  if (opts.reentrant === false && kinds > 0) {
    throw new TypeError(
      `reentrant: false is the plain token lock; it cannot be combined with mode, fair or limit`,
    );
  }
  return Object.freeze(opts) as LockOptions;
}

/**
 * Reads an options object once, own enumerable properties only, into a new object that has every
 * known name as an own property (undefined when absent). A getter or Proxy is read exactly once per
 * name, so a value cannot change between validation and use; an inherited value (a polluted
 * Object.prototype) is never read, and later spreads of the snapshot cannot pick one up either.
 */
export function snapshotOptions(
  options: unknown,
  known: readonly string[],
  where: string,
): Record<string, unknown> {
  const snapshot: Record<string, unknown> = {};
  for (const name of known) snapshot[name] = undefined;
  if (options === undefined || options === null) return snapshot;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`The ${where} must be an object, got ${describe(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) throw unknownOption(name, known, where);
    snapshot[name] = (options as Record<string, unknown>)[name];
  }
  return snapshot;
}

const prepared = new WeakSet<object>();

/**
 * Validates options once (e.g. a decorator's, at decoration time) and returns a frozen copy that
 * later calls pass without being validated again.
 */
export function prepareLockOptions(options: unknown, where = 'lock options'): LockOptions {
  const copy = validateLockOptions(options, where);
  prepared.add(copy);
  return copy;
}

/**
 * Prepared options with `signal` in place of theirs, still prepared: a call that adds its own
 * signal (e.g. an unsubscribe) does not validate the rest again.
 */
export function withLockSignal(options: LockOptions, signal: AbortSignal): LockOptions {
  if (!prepared.has(options)) return prepareLockOptions({ ...options, signal });
  const copy = Object.freeze({ ...options, signal });
  prepared.add(copy);
  return copy;
}

/** The options of a call that passes none (`acquire(key)`): validated once, shared by every such call. */
let noOptions: LockOptions | undefined;

/** The options of one call: prepared ones as they are, anything else validated now into a frozen snapshot. */
export function callLockOptions(options: unknown): LockOptions {
  if (options === undefined) return (noOptions ??= prepareLockOptions(undefined));
  return typeof options === 'object' && options !== null && prepared.has(options)
    ? (options as LockOptions)
    : validateLockOptions(options);
}

function assertPermits(permits: unknown, limit: unknown): void {
  if (typeof permits !== 'number') throw new TypeError(`permits must be a number, got ${describe(permits)}`);
  if (limit === undefined) {
    throw new TypeError('permits needs limit: it takes several permits of a counting semaphore');
  }
  if (!Number.isInteger(permits) || permits < 1 || permits > (limit as number)) {
    throw new RangeError(`permits must be a whole number from 1 to limit (${String(limit)}), got ${permits}`);
  }
}

function assertHoldBounds(o: LockOptions): void {
  if (o.minHoldMs !== undefined && o.maxHoldMs !== undefined && o.minHoldMs > o.maxHoldMs) {
    throw new RangeError(`minHoldMs (${o.minHoldMs}) must not exceed maxHoldMs (${o.maxHoldMs})`);
  }
  if (o.minHoldMs !== undefined && o.leaseMs !== undefined && o.minHoldMs > o.leaseMs) {
    throw new RangeError(
      `minHoldMs (${o.minHoldMs}) must not exceed leaseMs (${o.leaseMs}): the lease ends first`,
    );
  }
}
