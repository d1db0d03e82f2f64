import type { KindRegistry } from '../kinds/kind-registry';
import type { ConnectionState } from '../events/lock-event-map';
import type { WakeupChannels } from '../waiting/wakeup-hub';
import type { MultiKeyLocker } from '../multi/multi-key-locker';
import type { InspectionTarget } from '../inspection/inspection-target';

/**
 * The storage side an engine is built on: one Redis (standalone or Sentinel), a Cluster, RedLock
 * over independent masters, or the testing module's in-memory store.
 */
export interface LockBackend {
  /** Picks the lock kind for validated options. */
  readonly kinds: KindRegistry;
  /** Wake-ups for waiters. */
  readonly hub: WakeupChannels;
  /** Takes several keys in one atomic call where it can; without it, multi-key locks go key by key. */
  readonly multiKeys?: MultiKeyLocker;
  /** Inspection (list, inspect, forceRelease); a backend without it does not support them. */
  readonly inspection?: InspectionTarget;
  /**
   * Round trip to the storage in ms (the slowest connection; RedLock: a quorum must answer).
   * Rejects with LockRedisError when it cannot answer within `timeoutMs`.
   */
  ping(timeoutMs: number): Promise<number>;
  /** Calls `listener` whenever one of its connections goes down or comes back up. */
  watchConnections?(listener: (state: ConnectionState) => void): void;
  /**
   * Calls `listener` whenever one of its connections is made (again): the server behind it may have
   * restarted or failed over, so the locks held through it must be checked.
   */
  watchReconnects?(listener: () => void): void;
  /** Closes what the backend opened (never a client passed in by the user). */
  close(): Promise<void>;
}
