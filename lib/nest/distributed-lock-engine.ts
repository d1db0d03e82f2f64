import type {
  ForceReleaseLogOptions,
  ForceReleaseOptions,
  ForceReleaseRecord,
  InspectLockOptions,
  ListLocksOptions,
  ListLocksResult,
  LockInfo,
  LockEngineReadiness,
  LockEngineStats,
  LockEvents,
  LockHandle,
  LockOptions,
  MultiLockHandle,
  ResolvedEngineOptions,
} from '../core';

/**
 * What the Nest layer needs from a lock engine: the one door from Nest into core. The module
 * provides it under the token of the same name (built from the resolved options); the testing
 * module provides an in-memory one; a test may override it.
 */
export interface DistributedLockEngine {
  readonly options: ResolvedEngineOptions;
  readonly events: LockEvents;
  acquire(key: string, options?: LockOptions): Promise<LockHandle>;
  acquire(keys: readonly string[], options?: LockOptions): Promise<MultiLockHandle>;
  acquire(key: string | readonly string[], options?: LockOptions): Promise<LockHandle | MultiLockHandle>;
  tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null>;
  tryAcquire(keys: readonly string[], options?: LockOptions): Promise<MultiLockHandle | null>;
  tryAcquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<LockHandle | MultiLockHandle | null>;
  using<T>(
    key: string,
    options: LockOptions | undefined,
    fn: (lock: LockHandle) => Promise<T> | T,
  ): Promise<T>;
  using<T>(
    keys: readonly string[],
    options: LockOptions | undefined,
    fn: (lock: MultiLockHandle) => Promise<T> | T,
  ): Promise<T>;
  runInLock<T>(handle: LockHandle | MultiLockHandle, fn: () => T): T;
  hold<T>(handle: LockHandle | MultiLockHandle, fn: () => Promise<T> | T): Promise<T>;
  current(key?: string): LockHandle | undefined;
  stats(): LockEngineStats;
  readiness(): Promise<LockEngineReadiness>;
  isLocked(key: string, options?: InspectLockOptions): Promise<boolean>;
  inspect(key: string, options?: InspectLockOptions): Promise<LockInfo | null>;
  list(options?: ListLocksOptions): Promise<ListLocksResult>;
  forceRelease(key: string, options: ForceReleaseOptions): Promise<boolean>;
  forceReleases(options?: ForceReleaseLogOptions): Promise<ForceReleaseRecord[]>;
  close(): Promise<void>;
}

/** Injection token of the lock engine (type and token share the name, as ThrottlerStorage does). */
export const DistributedLockEngine = Symbol('DistributedLockEngine');
