import type { LockNotAcquiredError } from '../core';
import type { RetryAfterOption } from './interfaces';

/**
 * Seconds for `Retry-After` from the `retryAfter` option: the engine's estimate of when the lock
 * frees (a fixed lease's remaining time, else recent hold times of the key), rounded up; 1 when
 * unknown; undefined for no header.
 */
export function retryAfterSeconds(option: RetryAfterOption, error: LockNotAcquiredError): number | undefined {
  if (option === false) return undefined;
  if (typeof option === 'number') return option;
  if (typeof option === 'function') {
    const seconds = option(error);
    return seconds === undefined ? undefined : Math.max(0, Math.ceil(seconds));
  }
  const ms = error.expectedFreeInMs;
  return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 1;
}

/**
 * Milliseconds for `retryAfterMs` outside HTTP, from the same `retryAfter` option: the engine's
 * estimate as it is (no rounding to seconds); 1000 when unknown; a number or a function's result
 * (seconds) times 1000; undefined for none.
 */
export function retryAfterMs(option: RetryAfterOption, error: LockNotAcquiredError): number | undefined {
  if (option === true) {
    const ms = error.expectedFreeInMs;
    return ms > 0 ? Math.ceil(ms) : 1000;
  }
  const seconds = retryAfterSeconds(option, error);
  return seconds === undefined ? undefined : seconds * 1000;
}
