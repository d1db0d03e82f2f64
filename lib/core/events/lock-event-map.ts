import type { LockLostReason } from '../errors';
import type { ForceReleaseRecord } from '../options/lock-info';

/** Observability events of a lock engine (listen with `engine.events.on(name, fn)`). */
export interface LockEventMap {
  /**
   * A lock was granted (or re-entered). `waitedMs` counts from the call; `attempts` Redis attempts made;
   * `replicaAcks` replicas that acknowledged a fresh grant (only with the `replicas` option).
   */
  acquired: [
    {
      key: string;
      kind: string;
      waitedMs: number;
      attempts: number;
      reentered: boolean;
      fencingToken: number;
      replicaAcks?: number;
      /** True when a holder of this process handed the lock over (cohorts): no Redis command. */
      handedOver?: boolean;
    },
  ];
  /**
   * An acquisition ended without the lock: `timeout` (busy), `aborted`, `closed` or `error` (Redis).
   * `tryOnly` is true for tryAcquire (which resolves null on `timeout` instead of throwing);
   * `waitMs` is the wait the call allowed (0: a single attempt, e.g. a skipped scheduled run).
   */
  notAcquired: [
    {
      key: string;
      kind: string;
      waitedMs: number;
      attempts: number;
      reason: 'timeout' | 'aborted' | 'closed' | 'error';
      tryOnly: boolean;
      waitMs: number;
    },
  ];
  /** An attempt found the lock busy (contention). */
  contended: [{ key: string; kind: string; retryAfterMs: number }];
  /**
   * A hold was released; `heldMs` since the grant; `result` as Redis reported it (`still-held` after
   * an inner re-entry). `fencingToken` is the grant's: with `key` it names the grant.
   */
  released: [
    {
      key: string;
      kind: string;
      fencingToken: number;
      heldMs: number;
      result: 'released' | 'still-held' | 'not-held' | 'failed';
      error?: unknown;
    },
  ];
  /** A watchdog round: leases renewed, lost and failed. */
  renewed: [{ renewed: number; lost: number; failed: number }];
  /** A held lock is known lost; its handle's signal was aborted with the same reason. `heldMs` since the grant. */
  lost: [
    {
      key: string;
      kind: string;
      fencingToken: number;
      heldMs: number;
      reason: LockLostReason;
      error: Error;
    },
  ];
  /** A connection to the storage went down or came back (once per change, not per command). */
  connection: [ConnectionState];
  /**
   * Redis refused part of the inspection registry (an ACL without SUBSCRIBE on the notice channel,
   * or without MULTI/EXEC): `reason` is its answer; `undefined` when it is accepted again. Once per
   * change. Locks still work; force releases reach this engine's holders only at their next renewal,
   * or list() does not show its locks.
   */
  refusal: [{ what: 'force-release notices' | 'lock registry'; reason: string | undefined }];
  /** This engine force-released a lock (forceRelease): the audit entry, as written to the stream. */
  forceReleased: [ForceReleaseRecord];
}

/** The state of one storage connection (`name`: `Redis`, or `RedLock node 2`). */
export interface ConnectionState {
  name: string;
  state: 'up' | 'down';
  /** Why it is down (the connection error's message). */
  reason?: string;
}
