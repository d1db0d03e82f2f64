import {
  isLockKeyError,
  LockError,
  LockNotAcquiredError,
  LockRedisError,
  LockServiceClosedError,
} from '../../core';
import { LOCK_UNAVAILABLE_MESSAGE, LOCKED_MESSAGE, lockFailedMessage } from '../distributed-lock.messages';
import type { RetryAfterOption } from '../interfaces';
import { retryAfterMs } from '../retry-after';

/**
 * The code of a lock error's answer outside HTTP: GraphQL `extensions.code`, the `code` of an
 * RpcException's or WsException's error object. The first three are the HTTP 423 / 503 / 400.
 */
export type LockErrorCode = 'LOCKED' | 'SERVICE_UNAVAILABLE' | 'BAD_USER_INPUT' | 'INTERNAL_SERVER_ERROR';

/** What a transport answers for a lock error, before it is wrapped in that transport's error type. */
export interface LockErrorAnswer {
  /** LOCKED (busy), SERVICE_UNAVAILABLE (Redis down, shutting down), BAD_USER_INPUT (a refused key), INTERNAL_SERVER_ERROR (any other lock error). */
  readonly code: LockErrorCode;
  /** For the client: never the lock key (it may carry user data and is an internal name). */
  readonly message: string;
  /** LOCKED only: when the lock is likely free, in ms (from the `retryAfter` option; absent when it is `false`). */
  readonly retryAfterMs?: number;
}

/** The answer for `error`, or undefined when it is not a lock error (it then passes unchanged). */
export function lockErrorAnswer(error: unknown, retryAfter: RetryAfterOption): LockErrorAnswer | undefined {
  if (error instanceof LockNotAcquiredError) {
    const ms = retryAfterMs(retryAfter, error);
    return ms === undefined
      ? { code: 'LOCKED', message: LOCKED_MESSAGE }
      : { code: 'LOCKED', message: LOCKED_MESSAGE, retryAfterMs: ms };
  }
  if (error instanceof LockRedisError || error instanceof LockServiceClosedError) {
    return { code: 'SERVICE_UNAVAILABLE', message: LOCK_UNAVAILABLE_MESSAGE };
  }
  // Key errors name the template and the problem, never the key's value.
  if (isLockKeyError(error)) return { code: 'BAD_USER_INPUT', message: error.message };
  if (error instanceof LockError)
    return { code: 'INTERNAL_SERVER_ERROR', message: lockFailedMessage(error.name) };
  return undefined;
}
