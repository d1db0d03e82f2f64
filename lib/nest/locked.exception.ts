import { STATUS_CODES } from 'node:http';
import { HttpException } from '@nestjs/common';
import { LOCKED_MESSAGE } from './distributed-lock.messages';
import { DEFAULT_BUSY_STATUS } from './module-options';

/** Options of a LockedException. */
export interface LockedExceptionOptions {
  /** HTTP status; default 423 (Locked). */
  status?: number;
  /** Seconds the client should wait, sent as `Retry-After` by the interceptor. */
  retryAfterSeconds?: number;
  /** Message of the response body. */
  message?: string;
  /** The LockNotAcquiredError behind it (kept as `cause`, never sent to the client). */
  cause?: unknown;
}

/** The HTTP answer to "the lock stayed busy": 423 Locked by default. */
export class LockedException extends HttpException {
  /** Seconds sent as `Retry-After`, when known. */
  readonly retryAfterSeconds?: number;

  constructor(options: LockedExceptionOptions = {}) {
    const status = options.status ?? DEFAULT_BUSY_STATUS;
    // The lock key is not in the body: it may carry user data and is an internal name.
    // The body names the status it comes with: 'Locked' for 423, 'Conflict' for a busyStatus of 409, ...
    const error = STATUS_CODES[status] ?? 'Locked';
    super({ statusCode: status, message: options.message ?? LOCKED_MESSAGE, error }, status, {
      cause: options.cause,
    });
    this.name = new.target.name;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
