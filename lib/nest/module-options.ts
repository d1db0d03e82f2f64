import type { LockEngineOptions } from '../core/lock-options';
import { isRedisClient } from '../core/redis-client';
import { resolveRedlockOptions } from '../core/redlock/redlock-options';
import { describe, resolveEngineOptions } from '../core/validation';
import type { DistributedLockModuleOptions, RetryAfterOption } from './interfaces';

/** Default HTTP status of a "busy" answer: 423 Locked (RFC 4918). */
export const DEFAULT_BUSY_STATUS = 423;

/** The module options split into what the engine gets and what the HTTP boundary uses, all validated. */
export interface ResolvedModuleOptions {
  /** Engine tuning (everything but the connection), validated by the engine's own rules. */
  engine: LockEngineOptions;
  /** `redis` or `redlock`, as given. */
  connection: Pick<DistributedLockModuleOptions, 'redis' | 'redlock'>;
  /** HTTP status of a "busy" answer. */
  busyStatus: number;
  /** How the `Retry-After` header is chosen. */
  retryAfter: RetryAfterOption;
}

/**
 * Validates the module options before anything connects (the module connects in onModuleInit):
 * the Nest-only ones here, the rest by the engine's validators, so messages name the option.
 */
export function resolveModuleOptions(options: unknown, connectionRequired = true): ResolvedModuleOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`DistributedLockModule options must be an object, got ${describe(options)}`);
  }
  // `isGlobal` is a ConfigurableModuleBuilder extra: normally stripped before we see it, ignored if not.
  const {
    redis,
    redlock,
    busyStatus = DEFAULT_BUSY_STATUS,
    retryAfter = true,
    isGlobal: _isGlobal,
    ...engine
  } = options as DistributedLockModuleOptions & { isGlobal?: unknown };
  const resolved = resolveEngineOptions(engine);
  if (redis !== undefined && redlock !== undefined) {
    throw new TypeError('Give either "redis" (one deployment) or "redlock" (independent masters), not both');
  }
  if (redlock !== undefined) resolveRedlockOptions(redlock, resolved.commandTimeoutMs);
  else if (redis !== undefined) assertConnectionOption(redis);
  else if (connectionRequired) {
    // Not required only with a pre-built engine (TEMPORARY SEAM of issue 12, the testing module).
    throw new TypeError(
      'DistributedLockModule needs a "redis" option (a URL, ioredis options or a client), or "redlock"',
    );
  }
  assertBusyStatus(busyStatus);
  assertRetryAfter(retryAfter);
  return { engine, connection: redlock !== undefined ? { redlock } : { redis }, busyStatus, retryAfter };
}

function assertBusyStatus(status: unknown): asserts status is number {
  if (typeof status !== 'number') throw new TypeError(`busyStatus must be a number, got ${describe(status)}`);
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new RangeError(`busyStatus must be an HTTP error status from 400 to 599, got ${status}`);
  }
}

function assertRetryAfter(value: unknown): asserts value is RetryAfterOption {
  if (typeof value === 'boolean' || typeof value === 'function') return;
  if (typeof value !== 'number') {
    throw new TypeError(
      `retryAfter must be a boolean, a number of seconds or a function, got ${describe(value)}`,
    );
  }
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`retryAfter must be a whole number of seconds >= 0, got ${value}`);
  }
}

/** The shape checks of the engine's resolveConnection, made here because the module connects later. */
function assertConnectionOption(option: unknown): void {
  if (isRedisClient(option)) return;
  if (typeof option === 'string') {
    if (!/^rediss?:\/\//.test(option)) {
      throw new TypeError(`redis must be a redis:// or rediss:// URL, got ${describe(option)}`);
    }
    return;
  }
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new TypeError(
      `redis must be a URL, ioredis options, or an ioredis Redis/Cluster instance, got ${describe(option)}`,
    );
  }
}
