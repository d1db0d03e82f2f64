import type { LockOptions } from '../../core/lock-options';

/** Builds the lock key from the decorated method's arguments (called with the method's `this`). */
export type LockKeyFunction = (...args: any[]) => string;

/** Options of the @DistributedLock() method decorator. */
export interface DistributedLockOptions extends LockOptions {
  /**
   * The lock key: a template such as `'seckill:{0}'` or `'order:{1.id}'` (argument index, then an
   * optional property path), or a function of the method's arguments.
   */
  key: string | LockKeyFunction;
  /**
   * What to do when the lock stays busy: `'throw'` (default) rejects with LockNotAcquiredError after
   * `waitMs`; `'skip'` makes one attempt (or waits `waitMs` if given) and resolves `undefined`
   * without running the method — the "one replica runs the cron job" pattern.
   */
  onBusy?: 'throw' | 'skip';
}
