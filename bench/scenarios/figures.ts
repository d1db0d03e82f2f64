import type { LibraryId } from '../adapters';
import { RedisTarget } from '../redis-target';
import { round, summarize, type LatencySummary } from '../stats';
import type { ContentionResult } from '../worker/protocol';

/** Uncontended figures for one caller count. */
export interface UncontendedFigures {
  callers: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  clientCmdsPerOp: number;
  /** INFO commandstats delta per cycle (Lua-internal commands included). */
  cmdsPerOp: number;
  /** Redis CPU per cycle, µs. */
  cpuUsPerOp: number;
  /** ops/s of every trial; the figures above are the median trial's. */
  trialsOpsPerSec: number[];
}

/** Contention figures for one critical-section length. */
export interface ContentionFigures {
  csMs: number;
  acquisitions: number;
  acqPerSec: number;
  /** Over every acquire call, the failed ones included (they waited too). */
  wait: LatencySummary;
  failed: number;
  lostUpdates: number;
  /** INFO commandstats delta / acquisitions, commands run inside Lua included. */
  cmdsPerAcq: number;
  /** The same without the critical section's own GET + SET. */
  lockCmdsPerAcq: number;
  /** Commands the clients sent (round trips), per acquisition, GET + SET of the counter excluded. */
  clientCmdsPerAcq: number;
  cpuUsPerAcq: number;
  /** Acquisitions per worker process (fairness across processes). */
  perProcess: number[];
  /** Wait p99 per worker process. */
  perProcessP99: number[];
  /** Commands by name per acquisition (profile). */
  commandMix: Record<string, number>;
  metrics?: Record<string, number>;
  firstError?: string;
  elapsedMs: number;
}

/** Everything measured for one library. */
export interface LibraryFigures {
  id: LibraryId;
  name: string;
  uncontended: UncontendedFigures[];
  contention: ContentionFigures[];
}

/** Combines what the worker processes of one contention run saw with Redis' own counters. */
export function contentionFigures(
  csMs: number,
  results: ContentionResult[],
  delta: ReturnType<typeof RedisTarget.delta>,
  counter: number,
): ContentionFigures {
  const acquisitions = results.reduce((s, r) => s + r.acquisitions, 0);
  const perAcq = (n: number) => round(n / Math.max(1, acquisitions));
  const elapsedMs = Math.max(...results.map((r) => r.finishedMs));
  const allWaits = results.flatMap((r) => [...r.waits, ...r.failedWaits]);
  const commandMix: Record<string, number> = {};
  for (const [name, calls] of Object.entries(delta.commands).sort((a, b) => b[1] - a[1]))
    commandMix[name] = perAcq(calls);
  const metrics = results.some((r) => r.metrics)
    ? sumMetrics(results.map((r) => r.metrics ?? {}))
    : undefined;
  return {
    csMs,
    acquisitions,
    acqPerSec: round(acquisitions / (elapsedMs / 1000)),
    wait: roundSummary(summarize(allWaits)),
    failed: results.reduce((s, r) => s + r.failures, 0),
    lostUpdates: acquisitions - counter,
    cmdsPerAcq: perAcq(delta.totalCommands),
    lockCmdsPerAcq: perAcq(delta.totalCommands - 2 * acquisitions),
    clientCmdsPerAcq: perAcq(results.reduce((s, r) => s + r.clientCommands, 0)),
    cpuUsPerAcq: perAcq(delta.cpuMicros),
    perProcess: results.map((r) => r.acquisitions),
    perProcessP99: results.map((r) => round(summarize([...r.waits, ...r.failedWaits]).p99)),
    commandMix,
    metrics,
    firstError: results.find((r) => r.firstError)?.firstError,
    elapsedMs,
  };
}

function sumMetrics(list: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of list) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function roundSummary(s: LatencySummary): LatencySummary {
  return { count: s.count, p50: round(s.p50), p99: round(s.p99), max: round(s.max), mean: round(s.mean) };
}
