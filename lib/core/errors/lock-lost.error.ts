import { quoteKey } from './message-text';
import { LockError } from './lock-error';

/** Why a held lock is known to be lost. */
export type LockLostReason =
  | 'expired'
  | 'deleted'
  | 'taken-over'
  | 'renewal-failed'
  | 'closed'
  /** maxHoldMs ran out: the watchdog stopped renewing on purpose. */
  | 'max-hold'
  /** An operator evicted the holder (forceRelease): the key's fence was advanced past its token. */
  | 'force-released'
  /**
   * A connection to Redis came back (after a restart, a failover, a network cut) and the lock was
   * not there any more: a server restarted without persistence, or a promoted replica never had it.
   */
  | 'reset';

/** The lock was held and is not any more: lease ran out, key deleted, taken over, or renewal failed. */
export class LockLostError extends LockError {
  readonly reason: LockLostReason;

  constructor(key: string, reason: LockLostReason, cause?: unknown) {
    super(`Lock ${quoteKey(key)} lost (${reason})`, key, cause === undefined ? undefined : { cause });
    this.reason = reason;
  }
}
