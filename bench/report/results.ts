import type { LibraryId } from '../adapters';
import type { HttpFigures } from '../scenarios/http';
import type { FloorFigures } from '../scenarios/critical-section-floor';
import type { PairedContention } from '../scenarios/figures';
import type { LibraryFigures } from '../scenarios/lock-suite';

/** One held-locks step of the scale scenario (see worker/scale-worker.ts). */
export interface HeldStep {
  locks: number;
  acquirePerSec: number;
  heapMb: number;
  heapBytesPerLock: number;
  activeTimers: number;
  timersAdded: number;
  redisBytesPerLock: number;
  renewEveryMs: number;
  renewalClientCmdsPerSec: number;
  renewalServerCmdsPerSec: number;
  renewalCpuUsPerSec: number;
  watchdogEntries: number;
  allReleased: boolean;
}

/** The waiters step of the scale scenario. */
export interface WaitersStep {
  waiters: number;
  keys: number;
  serverChannels: number;
  subscribersPerChannel: { min: number; max: number };
  heapMb: number;
  heapBytesPerWaiter: number;
  activeTimers: number;
  timersAdded: number;
  idleClientCmdsPerSec: number;
  idleServerCmdsPerSec: number;
  drainMs: number;
  drainAcqPerSec: number;
  granted: number;
  failed: number;
  channelsAfter: number;
  waitingLocksAfter: number;
}

/** One target of the issue, evaluated on this run. */
export interface TargetResult {
  target: string;
  ours: number | string;
  reference: number | string;
  ratio?: number;
  pass: boolean;
  detail?: string;
}

/** Everything one `npm run bench` measured; written to bench/results/latest.json. */
export interface BenchResults {
  meta: {
    date: string;
    profile: string;
    command: string;
    machine: {
      nproc: number;
      cpuModel: string;
      node: string;
      redis: string;
      loadAvgAtStart: number[];
      loadAvgAtEnd: number[];
    };
    redis: { url: string; startedByBench: boolean };
    waitMs: number;
    contention: { processes: number; callersPerProcess: number; durationMs: number; target: number };
    durationSec: number;
  };
  libraries: LibraryFigures[];
  /** Redis CPU of the critical section alone (in-process mutex, no lock commands). */
  floor?: FloorFigures[];
  /**
   * Issue 46's contention rows from paired rounds (bench/scenarios/paired-contention.ts), one entry
   * per critical-section length; absent in runs saved before them.
   */
  contentionPaired?: PairedContention[];
  scale?: { held: HeldStep[]; waiters?: WaitersStep };
  /** Floods of waiters on one key (bench/scenarios/flood.ts). */
  flood?: FloodFigures;
  http?: HttpFigures[];
  targets: TargetResult[];
  /** Libraries asked for but not measured (with why). */
  skipped: { id: LibraryId | string; reason: string }[];
}

/** A flood of waiters on one key in one process (bench/scenarios/flood.ts). */
export interface FloodFigures {
  waiters: number;
  waitMs: number;
  /** Time to start every acquire call. */
  enqueueMs: number;
  /** How long after its deadline the last waiter settled. */
  lastSettledAfterDeadlineMs: number;
  maxLoopLagMs: number;
  p99LoopLagMs: number;
  heapBytesPerWaiter: number;
  /** MaxListenersExceededWarning seen during the flood (should be 0). */
  listenerWarnings: number;
  /** Locks with local waiters left after the flood (should be 0). */
  waitingLocksAfter: number;
}
