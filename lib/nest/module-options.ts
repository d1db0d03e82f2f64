import { assertKnownNames, describe, resolveEngineOptions } from '../core/validation';
import type { LockEngineOptions } from '../core/lock-options';
import type { DistributedLockModuleOptions, RetryAfterOption } from './interfaces';

/** Default HTTP status of a "busy" answer: 423 Locked (RFC 4918). */
export const DEFAULT_BUSY_STATUS = 423;

const ENGINE_NAMES = ['keyPrefix', 'defaults', 'watchdogLeaseMs', 'renewEveryMs', 'backoff', 'fenceTtlMs', 'commandTimeoutMs'];
const NEST_NAMES = ['busyStatus', 'retryAfter'];
// `isGlobal` is a ConfigurableModuleBuilder extra: normally stripped before we see it, tolerated if not.
const KNOWN_NAMES = ['redis', 'redlock', ...ENGINE_NAMES, ...NEST_NAMES, 'isGlobal'];

/** The module options split into what the engine gets and what the HTTP boundary uses, all validated. */
export interface ResolvedModuleOptions {
  /** Engine tuning, validated (the connection is resolved separately). */
  engine: LockEngineOptions;
  /** `redis` and/or `redlock`, as given (the engine refuses both together). */
  connection: Pick<DistributedLockModuleOptions, 'redis' | 'redlock'>;
  busyStatus: number;
  retryAfter: RetryAfterOption;
}

/** Validates the module options before anything connects; TypeError/RangeError name the option. */
export function resolveModuleOptions(options: unknown): ResolvedModuleOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`DistributedLockModule options must be an object, got ${describe(options)}`);
  }
  const opts = options as DistributedLockModuleOptions & Record<string, unknown>;
  assertKnownNames(opts, KNOWN_NAMES, 'DistributedLockModule options');
  if (opts.redis === undefined && opts.redlock === undefined) {
    throw new TypeError('DistributedLockModule needs a "redis" option (a URL, ioredis options or a client) or "redlock"');
  }
  if (opts.redlock !== undefined && !Array.isArray(opts.redlock)) {
    throw new TypeError(`redlock must be an array of connections (URLs, ioredis options or clients), got ${describe(opts.redlock)}`);
  }
  const engine: LockEngineOptions = {};
  for (const name of ENGINE_NAMES) {
    if (opts[name] !== undefined) (engine as Record<string, unknown>)[name] = opts[name];
  }
  resolveEngineOptions(engine);
  const busyStatus = opts.busyStatus ?? DEFAULT_BUSY_STATUS;
  if (typeof busyStatus !== 'number') throw new TypeError(`busyStatus must be a number, got ${describe(busyStatus)}`);
  if (!Number.isInteger(busyStatus) || busyStatus < 400 || busyStatus > 599) {
    throw new RangeError(`busyStatus must be an HTTP error status from 400 to 599, got ${busyStatus}`);
  }
  const retryAfter = opts.retryAfter ?? true;
  if (typeof retryAfter === 'number') {
    if (!Number.isInteger(retryAfter) || retryAfter < 0) {
      throw new RangeError(`retryAfter must be a whole number of seconds >= 0, got ${retryAfter}`);
    }
  } else if (typeof retryAfter !== 'boolean' && typeof retryAfter !== 'function') {
    throw new TypeError(`retryAfter must be a boolean, a number of seconds or a function, got ${describe(retryAfter)}`);
  }
  const connection: ResolvedModuleOptions['connection'] = {};
  if (opts.redis !== undefined) connection.redis = opts.redis;
  if (opts.redlock !== undefined) connection.redlock = opts.redlock;
  return { engine, connection, busyStatus, retryAfter };
}
