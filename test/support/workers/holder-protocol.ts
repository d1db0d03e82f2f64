/*
 * The protocol of holder-worker.ts, the one lock holder the specs run in processes of their own: one
 * JSON line each way (spawn-worker.ts, worker-io.ts). A command names its hold with `id`; every
 * message about that hold carries the same `id`. `at` is epochMs() of the worker (comparable across
 * processes on the host).
 */
import type { LockOptions } from '../../../lib/core/options/lock-options';

/** What the test tells a holder. */
export type HolderCommand =
  /**
   * Takes the lock of `key` (waitMs 120 s unless `options` says otherwise), re-enters it `reenter`
   * times, RPUSHes `id` to ORDER_KEY inside the section when that is set, then answers `granted`; with
   * `holdMs` it releases by itself after that long.
   */
  | { type: 'acquire'; id: string; key: string; options?: LockOptions; holdMs?: number; reenter?: number }
  /** Releases every hold of `id` (re-entries first). */
  | { type: 'release'; id: string }
  /** A fenced write to `resource` in the oracle with the token of `id` (0 when it holds nothing). */
  | { type: 'write'; id: string; resource: string }
  /**
   * Blocks the event loop with a busy loop until the file `untilFile` exists (at most `maxMs`): no
   * timer, I/O callback or renewal runs meanwhile. Then at once does the `thenWrite` write, if any.
   */
  | { type: 'block'; untilFile: string; maxMs: number; thenWrite?: { id: string; resource: string } }
  /** Answered with `pong` once every command sent before it has started (acquires have joined their queue). */
  | { type: 'ping'; id?: string }
  /** Closes the engine and the oracle, answers `closed`; the process then ends on SIGTERM. */
  | { type: 'close' };

/** What a holder tells the test. */
export type HolderMessage =
  | { type: 'ready'; pid: number; engine: string }
  | { type: 'contended'; key: string }
  | { type: 'granted'; id: string; token: number; attempts: number | undefined; at: number }
  | { type: 'failed'; id: string; name: string; message: string }
  /** The hold's signal aborted (`reason`: the LockLostError reason, or the abort reason as text). */
  | { type: 'lost'; id: string; reason: string; at: number }
  | { type: 'released'; id: string; result: boolean; at: number }
  | { type: 'written'; id: string; token: number; accepted: boolean; last: number; at: number }
  /** A watchdog round renewed `renewed` leases. */
  | { type: 'renewed'; renewed: number; at: number }
  | { type: 'blocked'; blockedMs: number; at: number }
  | { type: 'pong'; id?: string; at: number }
  | { type: 'closed' }
  /** An unhandled rejection or a failed command in the worker (a spec expects none). */
  | { type: 'unhandled'; error: string };
