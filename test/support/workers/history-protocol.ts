/*
 * The protocol of history-worker.ts (issue 39, "every holder told"): one JSON line each way
 * (spawn-worker.ts, worker-io.ts). The worker runs a few callers that take, write through the fencing
 * oracle, hold and release locks of a small set of keys in a loop, and records what happened to each
 * grant; the test collects every worker's history at the end. Every `at` is historyEpochMs() of the worker
 * (history-clock.ts: comparable across processes on the host).
 */

/** How one caller of a worker takes its locks. */
export interface HistoryCaller {
  /** Fixed lease (ms); omitted: the watchdog keeps the lock alive. */
  leaseMs?: number;
}

/** What the test tells a history worker. */
export type HistoryCommand =
  /** Starts the callers' loops. */
  | { type: 'go' }
  /** Stops the loops (a waiting acquire is aborted, a hold cut short), then answers `history`. */
  | { type: 'stop' }
  /** Closes the engine and the oracle, answers `closed`; the process then ends on SIGTERM. */
  | { type: 'close' };

/** One thing that happened in a worker. `caller` is the index of its caller in the worker. */
export type HistoryEvent =
  /** acquire() resolved: the lock of `key` was granted with `token`. */
  | { type: 'grant'; caller: number; key: string; token: number; lease: 'fixed' | 'watchdog'; at: number }
  /** The handle's signal aborted (`reason`: the LockLostError reason, or the abort reason as text). */
  | {
      type: 'loss';
      caller: number;
      key: string;
      token: number;
      reason: string;
      lostError: boolean;
      at: number;
    }
  /**
   * A fenced write to `resource` (`<key>` after the grant, `<key>:end` at the end of the hold) with the
   * grant's `token`: sent at `at`, answered at `doneAt`; `last`: the oracle's last accepted token.
   */
  | {
      type: 'write';
      caller: number;
      key: string;
      resource: string;
      token: number;
      accepted: boolean;
      last: number;
      at: number;
      doneAt: number;
    }
  /** release() was called at `at` and resolved `result` at `doneAt`. */
  | {
      type: 'release';
      caller: number;
      key: string;
      token: number;
      result: boolean;
      at: number;
      doneAt: number;
    }
  /** acquire() failed (`name`: the error class, e.g. LockRedisError during the outage). */
  | { type: 'acquireError'; caller: number; key: string; name: string; message: string; at: number }
  /** A connection of the engine went down or came back (the engine's `connection` event). */
  | { type: 'connection'; name: string; state: 'up' | 'down'; at: number };

/** What a history worker tells the test. */
export type HistoryMessage =
  | { type: 'ready'; pid: number; engine: string }
  /** Live: `caller` starts waiting for the lock of `key`. */
  | { type: 'waiting'; caller: number; key: string; at: number }
  /** Live: `caller` was granted `key` at `at` and will hold it `holdMs` (less when told of a loss or stopped). */
  | { type: 'holding'; caller: number; key: string; lease: 'fixed' | 'watchdog'; holdMs: number; at: number }
  | { type: 'history'; process: string; events: HistoryEvent[] }
  | { type: 'closed' }
  /** An unhandled rejection or a failed command in the worker (a spec expects none). */
  | { type: 'unhandled'; error: string };
