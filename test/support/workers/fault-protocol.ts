/** Commands the fault tests send to a holder worker (one JSON line each). */
export type HolderCommand =
  /** `as` names the handle when the worker holds (or waits for) one key twice; messages carry it as `key`. */
  | { cmd: 'hold'; key: string; leaseMs?: number; as?: string }
  | { cmd: 'write'; key: string; as?: string }
  | { cmd: 'release'; key: string; as?: string }
  /**
   * Blocks the event loop with a busy loop until the file `untilFile` exists (at most `maxMs`), then
   * at once writes to `thenWrite` with the token it held before the block.
   */
  | { cmd: 'block'; untilFile: string; maxMs: number; thenWrite?: string }
  | { cmd: 'ping' }
  | { cmd: 'close' };

/** Messages a holder worker sends back. `at` is epochMs() of the worker (comparable across processes). */
export type HolderMessage =
  | { type: 'ready'; pid: number }
  | { type: 'acquired'; key: string; token: number; at: number }
  | { type: 'acquire-failed'; key: string; error: string; message: string }
  | { type: 'lost'; key: string; reason: string; at: number }
  | { type: 'written'; key: string; token: number; accepted: boolean; at: number }
  | { type: 'released'; key: string; result: boolean; at: number }
  | { type: 'blocked'; blockedMs: number; at: number }
  | { type: 'pong'; at: number }
  | { type: 'renewed'; renewed: number; at: number }
  | { type: 'closed' }
  | { type: 'unhandled'; error: string };

/** The summary a contender worker sends when its loops are done. */
export interface ContenderReport {
  type: 'done';
  name: string;
  acquisitions: number;
  overlaps: number;
  staleWrites: number;
  tokenRegressions: number;
  waitsMs: number[];
  errors: string[];
}
