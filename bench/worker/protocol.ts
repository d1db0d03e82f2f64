import type { LatencySummary } from '../stats';

/** Acquire + release in a loop, each caller on its own key (no contention). */
export interface UncontendedTask {
  kind: 'uncontended';
  callers: number;
  durationMs: number;
  maxOps: number;
  keyPrefix: string;
  waitMs: number;
}

/** Callers of all worker processes on ONE key, each critical section a non-atomic GET → await → SET. */
export interface ContentionTask {
  kind: 'contention';
  callers: number;
  csMs: number;
  /** Wall-clock start shared by every worker (Date.now() based: same machine, same clock). */
  startAt: number;
  durationMs: number;
  /** Stop once the counter reached this many increments (all processes together). */
  target: number;
  lockKey: string;
  counterKey: string;
  waitMs: number;
}

/** A task the parent sends to a library worker. */
export type WorkerTask = UncontendedTask | ContentionTask;

/** What an uncontended run measured (latency of one acquire + release cycle). */
export interface UncontendedResult {
  ops: number;
  errors: number;
  elapsedMs: number;
  latency: LatencySummary;
  clientCommands: number;
  /** CPU time (user + system) of this worker process during the run, µs. */
  clientCpuMicros: number;
}

/** What one worker process saw during a contention run. */
export interface ContentionResult {
  acquisitions: number;
  failures: number;
  releaseErrors: number;
  /** Wait of every successful acquisition, ms (acquire called → resolved). */
  waits: number[];
  /** Wait of every failed acquisition, ms. */
  failedWaits: number[];
  /** Last caller finished, ms after startAt. */
  finishedMs: number;
  clientCommands: number;
  /** CPU time (user + system) of this worker process during the run, µs. */
  clientCpuMicros: number;
  /**
   * The counter value each of this process' critical sections wrote, in order. Under a lock that
   * holds, these are the grants' positions in one global order (1, 2, 3… across all processes):
   * the order of grants across processes, read from the protected state itself, no extra command.
   */
  grants: number[];
  metrics?: Record<string, number>;
  firstError?: string;
}

/** Parent → worker. */
export type ParentMessage = { type: 'run'; id: number; task: WorkerTask } | { type: 'exit' };

/** Worker → parent. */
export type WorkerMessage =
  | { type: 'ready'; name: string }
  | { type: 'done'; id: number; result: UncontendedResult | ContentionResult }
  | { type: 'failed'; id: number; message: string };
