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

/**
 * What a lock error means for the client, the one classification every transport answers by (HTTP
 * 423 / 503 / 400, and the codes outside HTTP); undefined when `error` is not a lock error.
 */
export function lockErrorCode(error: unknown): LockErrorCode | undefined {
  // Redis down or failing, or the service shutting down (closing before Redis answers is no lock).
  // Before "busy": LockServiceClosedError is a LockNotAcquiredError too.
  if (error instanceof LockRedisError || error instanceof LockServiceClosedError)
    return 'SERVICE_UNAVAILABLE';
  if (error instanceof LockNotAcquiredError) return 'LOCKED';
  if (isLockKeyError(error)) return 'BAD_USER_INPUT';
  if (error instanceof LockError) return 'INTERNAL_SERVER_ERROR';
  return undefined;
}

/** The answer for `error`, or undefined when it is not a lock error (it then passes unchanged). */
export function lockErrorAnswer(error: unknown, retryAfter: RetryAfterOption): LockErrorAnswer | undefined {
  switch (lockErrorCode(error)) {
    case 'LOCKED': {
      const ms = retryAfterMs(retryAfter, error as LockNotAcquiredError);
      return ms === undefined
        ? { code: 'LOCKED', message: LOCKED_MESSAGE }
        : { code: 'LOCKED', message: LOCKED_MESSAGE, retryAfterMs: ms };
    }
    case 'SERVICE_UNAVAILABLE':
      return { code: 'SERVICE_UNAVAILABLE', message: LOCK_UNAVAILABLE_MESSAGE };
    case 'BAD_USER_INPUT':
      // Key errors name the template and the problem, never the key's value.
      return { code: 'BAD_USER_INPUT', message: (error as Error).message };
    case 'INTERNAL_SERVER_ERROR':
      return { code: 'INTERNAL_SERVER_ERROR', message: lockFailedMessage((error as Error).name) };
    default:
      return undefined;
  }
}
