import type { LockOptions } from '../../core';

/** Builds the lock key from the decorated method's arguments (called with the method's `this`). */
export type LockKeyFunction<Args extends unknown[] = any[]> = (...args: Args) => string;

/** Options of the @DistributedLock() method decorator. */
export interface DistributedLockOptions<Args extends unknown[] = any[]> extends LockOptions {
  /**
   * The lock key: a template such as `'seckill:{0}'` or `'order:{1.id}'` (argument index, then an
   * optional property path), or a function of the method's arguments.
   */
  key: string | LockKeyFunction<Args>;
  /**
   * What to do when the lock stays busy: `'throw'` (default) rejects with LockNotAcquiredError after
   * `waitMs`; `'skip'` makes one attempt (or waits `waitMs` if given) and resolves `undefined`
   * without running the method — the "one replica runs the cron job" pattern.
   */
  onBusy?: 'throw' | 'skip';
}
