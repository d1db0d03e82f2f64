import type { LockOptions } from '../../core';

/**
 * Builds the lock key from the decorated method's arguments (called with the method's `this`). Only
 * a function listed in an array `key` (`key: [fn]`) may return an array of keys (a multi-key lock: all
 * or none, deadlock-free). A lone key function returns one string: the compiler refuses an array there,
 * and so does the decorator at run time (400 at HTTP) for untyped code.
 */
export type LockKeyFunction<Args extends unknown[] = any[]> = (...args: Args) => string | readonly string[];

/** Options of the @DistributedLock() method decorator. */
export interface DistributedLockOptions<Args extends unknown[] = any[]> extends LockOptions {
  /**
   * The lock key: a template such as `'seckill:{0}'` or `'order:{1.id}'` (argument index, then an
   * optional property path), an array of templates (`['acct:{0}', 'acct:{1}']`: every key at once,
   * all or none, deadlock-free), or a function of the method's arguments returning one key. An array
   * may also list functions; only such a function may return several keys.
   */
  key: string | readonly (string | LockKeyFunction<Args>)[] | ((...args: Args) => string);
  /**
   * What to do when the lock stays busy: `'throw'` (default) rejects with LockNotAcquiredError after
   * `waitMs`; `'skip'` makes one attempt (or waits `waitMs` if given) and resolves `undefined`
   * without running the method — the "one replica runs the cron job" pattern.
   */
  onBusy?: 'throw' | 'skip';
}
