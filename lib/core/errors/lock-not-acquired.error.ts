import { quoteKey } from './message-text';
import { LockError } from './lock-error';

/** Why a lock was not acquired, beyond the time waited. */
export interface LockNotAcquiredDetails {
  /** Replaces "still busy after waiting N ms" in the message. */
  readonly reason?: string;
  /** When the lock is likely free, in ms (default: `retryAfterMs`). */
  readonly expectedFreeInMs?: number;
}

/** The lock stayed busy until `waitMs` ran out (or it is held by this context and not reentrant). */
export class LockNotAcquiredError extends LockError {
  /** How long the caller waited, in milliseconds. */
  readonly waitedMs: number;
  /** Remaining lease of the current holder as Redis reported it, when known (ms); -1 when unknown. */
  readonly retryAfterMs: number;
  /**
   * When the lock is likely free, in ms: `retryAfterMs` for a fixed lease; for a lock kept by the
   * watchdog (whose remaining lease says little) the key's recent hold times; -1 when unknown.
   * The HTTP layer's `Retry-After` uses this.
   */
  readonly expectedFreeInMs: number;

  constructor(key: string, waitedMs: number, retryAfterMs = -1, details: LockNotAcquiredDetails = {}) {
    const { reason, expectedFreeInMs = retryAfterMs } = details;
    super(
      reason
        ? `Lock ${quoteKey(key)} not acquired: ${reason}`
        : `Lock ${quoteKey(key)} not acquired: still busy after waiting ${Math.round(waitedMs)} ms`,
      key,
    );
    this.waitedMs = waitedMs;
    this.retryAfterMs = retryAfterMs;
    this.expectedFreeInMs = expectedFreeInMs;
  }
}
