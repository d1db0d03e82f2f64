import { quoteKey } from './message-text';
import { LockError } from './lock-error';

/** The Redis key a lock needs holds other data (or a lock of another kind); it was left untouched. */
export class LockWrongTypeError extends LockError {
  /** The Redis key name that holds the foreign data. */
  readonly redisKey: string;

  constructor(key: string, redisKey: string, detail: string) {
    super(`Lock ${quoteKey(key)}: Redis key ${quoteKey(redisKey)} ${detail}; it was left untouched`, key);
    this.redisKey = redisKey;
  }
}
