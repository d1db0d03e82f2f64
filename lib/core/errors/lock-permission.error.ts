import { LockRedisError } from './lock-redis.error';

/**
 * The Redis user lacks a command, key pattern or channel the library needs (ACL). Found before the
 * first lock script runs, so it never leaves a half-written key; see docs/SECURITY.md for the ACL.
 */
export class LockPermissionError extends LockRedisError {
  /** The commands (or `channel`, `keys`) this user may not use where the library needs them. */
  readonly denied: readonly string[];

  constructor(message: string, denied: readonly string[], cause?: unknown) {
    super(message, undefined, cause);
    this.denied = denied;
  }
}
