import { CohortBounds, DEFAULT_COHORT_BOUNDS } from '../engine/cohort';
import {
  ENGINE_OPTION_NAMES,
  LOCK_OPTION_NAMES,
  LockEngineOptions,
  LockOptions,
  MAX_DURATION_MS,
  MAX_KEY_BYTES,
  ResolvedEngineOptions,
  DEFAULT_ENGINE_OPTIONS,
  ReplicaAckOptions,
} from './lock-options';

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

/** Refuses unknown option names and malformed values; returns the options unchanged. */
export function validateLockOptions(options: unknown, where = 'lock options'): LockOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`The ${where} must be an object, got ${describe(options)}`);
  }
  const opts = options as Record<string, unknown>;
  assertKnownNames(opts, LOCK_OPTION_NAMES as readonly string[], where);
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
  return opts as LockOptions;
}

const prepared = new WeakSet<object>();

/**
 * Validates options once (e.g. a decorator's, at decoration time) and returns a frozen copy that
 * later calls pass without being validated again.
 */
export function prepareLockOptions(options: unknown, where = 'lock options'): LockOptions {
  const copy = Object.freeze({ ...validateLockOptions(options, where) });
  prepared.add(copy);
  return copy;
}

/** The options of one call: prepared ones as they are, anything else validated now. */
export function callLockOptions(options: unknown): LockOptions {
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

/** Validates engine options and fills in every default. */
export function resolveEngineOptions(options: LockEngineOptions = {}): ResolvedEngineOptions {
  assertKnownNames(options as Record<string, unknown>, ENGINE_OPTION_NAMES, 'lock engine options');
  const d = DEFAULT_ENGINE_OPTIONS;
  const keyPrefix = options.keyPrefix ?? d.keyPrefix;
  if (typeof keyPrefix !== 'string')
    throw new TypeError(`keyPrefix must be a string, got ${describe(keyPrefix)}`);
  if (/[{}]/.test(keyPrefix)) {
    throw new TypeError(
      `keyPrefix must not contain "{" or "}": the library places the Cluster hash tag itself`,
    );
  }
  const defaults = options.defaults ?? {};
  assertKnownNames(defaults as Record<string, unknown>, ['waitMs', 'leaseMs'], 'defaults');
  const waitMs = defaults.waitMs ?? d.defaults.waitMs;
  assertDuration(waitMs, 'defaults.waitMs');
  if (defaults.leaseMs !== undefined) assertDuration(defaults.leaseMs, 'defaults.leaseMs', 1);
  const watchdogLeaseMs = options.watchdogLeaseMs ?? d.watchdogLeaseMs;
  assertDuration(watchdogLeaseMs, 'watchdogLeaseMs', 30);
  const renewEveryMs = options.renewEveryMs ?? Math.max(10, Math.floor(watchdogLeaseMs / 3));
  assertDuration(renewEveryMs, 'renewEveryMs', 10);
  if (renewEveryMs >= watchdogLeaseMs) {
    throw new RangeError(
      `renewEveryMs (${renewEveryMs}) must be shorter than watchdogLeaseMs (${watchdogLeaseMs})`,
    );
  }
  const backoff = options.backoff ?? {};
  assertKnownNames(backoff as Record<string, unknown>, ['initialMs', 'maxMs'], 'backoff');
  const initialMs = backoff.initialMs ?? d.backoff.initialMs;
  const maxMs = backoff.maxMs ?? d.backoff.maxMs;
  assertDuration(initialMs, 'backoff.initialMs', 1);
  assertDuration(maxMs, 'backoff.maxMs', 1);
  if (maxMs < initialMs)
    throw new RangeError(`backoff.maxMs (${maxMs}) must be >= backoff.initialMs (${initialMs})`);
  const fenceTtlMs = options.fenceTtlMs ?? d.fenceTtlMs;
  assertDuration(fenceTtlMs, 'fenceTtlMs', 1000);
  const commandTimeoutMs = options.commandTimeoutMs ?? d.commandTimeoutMs;
  assertDuration(commandTimeoutMs, 'commandTimeoutMs', 1);
  const replicas = options.replicas === undefined ? undefined : resolveReplicaAcks(options.replicas);
  const drainMs = options.drainMs ?? d.drainMs;
  assertDuration(drainMs, 'drainMs');
  const cohort = resolveCohort(options.cohort);
  return {
    keyPrefix,
    defaults: { waitMs, leaseMs: defaults.leaseMs },
    watchdogLeaseMs,
    renewEveryMs,
    backoff: { initialMs, maxMs },
    fenceTtlMs,
    commandTimeoutMs,
    drainMs,
    cohort,
    ...(replicas && { replicas }),
  };
}

/** Validates `cohort` and fills in its defaults. */
function resolveCohort(value: unknown): CohortBounds | false {
  if (value === false) return false;
  if (value === undefined || value === true) return DEFAULT_COHORT_BOUNDS;
  assertKnownNames(value as Record<string, unknown>, ['passes', 'budgetMs', 'yieldMs'], 'cohort options');
  const o = value as { passes?: number; budgetMs?: number; yieldMs?: number };
  const d = DEFAULT_COHORT_BOUNDS;
  const passes = o.passes ?? d.passes;
  if (typeof passes !== 'number')
    throw new TypeError(`cohort.passes must be a number, got ${describe(passes)}`);
  if (!Number.isInteger(passes) || passes < 0 || passes > 1000) {
    throw new RangeError(`cohort.passes must be a whole number from 0 to 1000, got ${passes}`);
  }
  const budgetMs = o.budgetMs ?? d.budgetMs;
  assertDuration(budgetMs, 'cohort.budgetMs');
  const yieldMs = o.yieldMs ?? d.yieldMs;
  assertDuration(yieldMs, 'cohort.yieldMs');
  return { passes, budgetMs, yieldMs };
}

/** Validates `replicas` (WAIT after each grant) and fills in its defaults. */
function resolveReplicaAcks(value: unknown): Required<ReplicaAckOptions> {
  assertKnownNames(value as Record<string, unknown>, ['count', 'timeoutMs', 'policy'], 'replicas options');
  const o = value as ReplicaAckOptions;
  const count = o.count ?? 1;
  if (typeof count !== 'number')
    throw new TypeError(`replicas.count must be a number, got ${describe(count)}`);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    throw new RangeError(`replicas.count must be a whole number from 1 to 1000, got ${count}`);
  }
  const timeoutMs = o.timeoutMs ?? 1000;
  assertDuration(timeoutMs, 'replicas.timeoutMs', 1);
  const policy = o.policy ?? 'report';
  if (policy !== 'report' && policy !== 'require') {
    throw new TypeError(`replicas.policy must be 'report' or 'require', got ${describe(policy)}`);
  }
  return { count, timeoutMs, policy };
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

function isAbortSignal(value: unknown): value is AbortSignal {
  return typeof AbortSignal !== 'undefined' && value instanceof AbortSignal;
}

/** A short, safe description of a value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  return `${typeof value} ${String(value)}`;
}
