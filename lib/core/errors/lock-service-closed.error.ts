import { LockNotAcquiredError } from './lock-not-acquired.error';

/**
 * The lock service is shutting down or closed: new acquisitions are refused and waiting ones given
 * up (the call may succeed on another replica; at the HTTP boundary a 503). A kind of
 * LockNotAcquiredError — the lock was not acquired — so one `catch` for "not acquired" still sees it;
 * check this class first to tell shutdown from a busy lock.
 */
export class LockServiceClosedError extends LockNotAcquiredError {
  constructor(state: 'closed' | 'shutting down', key?: string, waitedMs = 0) {
    super(key as string, waitedMs, -1, { reason: `the lock service is ${state}` });
    this.message = `The lock service is ${state}`;
  }
}
