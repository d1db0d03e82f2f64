import { quoteKey } from './message-text';
import { LockError } from './lock-error';

/** A read-lock holder asked for the write lock of the same key, which would deadlock itself. */
export class LockUpgradeError extends LockError {
  constructor(key: string) {
    super(
      `Lock ${quoteKey(key)}: this async context holds the read lock and asked for the write lock; ` +
        'upgrading would deadlock. Release the read lock first, or take the write lock from the start.',
      key,
    );
  }
}
