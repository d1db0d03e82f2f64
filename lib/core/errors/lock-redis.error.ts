import { LockError } from './lock-error';

/** Redis could not be reached or answered with an error: not "busy", not "lost". */
export class LockRedisError extends LockError {
  constructor(message: string, key?: string, cause?: unknown) {
    super(message, key, cause === undefined ? undefined : { cause });
  }
}
