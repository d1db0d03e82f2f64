import { LockError } from './lock-error';

/**
 * The lock service is shutting down or closed: new acquisitions are refused (the call may succeed
 * on another replica; at the HTTP boundary a 503).
 */
export class LockServiceClosedError extends LockError {
  constructor(state: 'closed' | 'shutting down', key?: string) {
    super(`The lock service is ${state}`, key);
  }
}
