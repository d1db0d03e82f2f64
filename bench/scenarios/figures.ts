import { OUR_ROWS, RAW, type LibraryId } from '../adapters';
import { RedisTarget } from '../redis-target';
import { pairedRatio, round, summarize, type LatencySummary, type PairedRatio } from '../stats';
import type { ContentionResult } from '../worker/protocol';

/** Uncontended figures for one caller count. */
export interface UncontendedFigures {
  callers: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  clientCmdsPerOp: number;
  /** CPU of the client process per cycle (user + system), µs: the library plus its Redis client. */
  clientCpuUsPerOp: number;
  /** INFO commandstats delta per cycle (Lua-internal commands included). */
  cmdsPerOp: number;
  /** Redis CPU per cycle, µs. */
  cpuUsPerOp: number;
  /** ops/s of every trial; the figures above are the median trial's. */
  trialsOpsPerSec: number[];
  /**
   * Our engine's rows (issue 46): ops/s, client CPU and Redis CPU per op over the raw lock's, taken
   * round by round in paired rounds (bench/config.ts, `pairedRounds`). Absent in older runs.
   */
  vsRaw?: { ops: PairedRatio; clientCpu: PairedRatio; redisCpu: PairedRatio };
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
  /** CPU of the client processes per acquisition (user + system, all processes), µs; the counter's GET + SET included. */
  clientCpuUsPerAcq: number;
  cpuUsPerAcq: number;
  /** Acquisitions per worker process (fairness across processes). */
  perProcess: number[];
  /** Wait p99 per worker process. */
  perProcessP99: number[];
  /**
   * Largest deviation of a process' share of the acquisitions from an equal share, as a fraction
   * (0.1 = one process got 10 % more or less than 1/processes of them). Absent in older runs.
   */
  shareDeviation?: number;
  /** Grant order across processes (from the counter values written); absent in older runs. */
  grantOrder?: GrantOrder;
  /** Local hand-offs (cohorts: `acquired` with `handedOver`) per acquisition; libraries that report them. */
  handOffsPerAcq?: number;
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

/**
 * The peers' rows that may be "the best peer" at `csMs`: not this library in any form, not the raw
 * lock, no failed acquisition and no lost update (a library that gave up or broke mutual exclusion
 * is no reference for throughput).
 */
export function contentionPeers(
  libraries: LibraryFigures[],
  csMs: number,
): { id: LibraryId; name: string; run: ContentionFigures }[] {
  return libraries
    .filter((l) => l.id !== RAW && !OUR_ROWS.includes(l.id))
    .map((l) => ({ id: l.id, name: l.name, run: l.contention.find((c) => c.csMs === csMs) }))
    .filter((p): p is { id: LibraryId; name: string; run: ContentionFigures } => p.run !== undefined)
    .filter((p) => p.run.failed === 0 && p.run.lostUpdates === 0);
}

/** The id of the paired contention rounds' row that runs the critical section alone (no lock). */
export const SERIAL = 'serial';

/** One row of the paired contention rounds: a library's worker processes, or the serial section. */
export interface PairedContentionRow {
  id: LibraryId | typeof SERIAL;
  name: string;
  /** Acquisitions per second in each round, in round order. */
  acqPerSec: number[];
  /** Failed acquisitions in each round. */
  failed: number[];
  /** Lost updates in each round. */
  lostUpdates: number[];
}

/**
 * Issue 46's contention rows, paired, for one critical-section length: rounds of `durationMs` per
 * row, the rows back to back in an order rotated by one every round (round r starts with row r mod
 * the row count). Ratios are taken within a round (pairedContentionRatio).
 */
export interface PairedContention {
  csMs: number;
  rounds: number;
  durationMs: number;
  rows: PairedContentionRow[];
}

/**
 * `ours`'s acquisitions/s over `reference`'s, round by round: the median, min–max and count of the
 * rounds in which both ran without a failed acquisition or a lost update; undefined without any.
 */
export function pairedContentionRatio(
  paired: PairedContention,
  ours: string,
  reference: string,
): PairedRatio | undefined {
  const a = paired.rows.find((r) => r.id === ours);
  const b = paired.rows.find((r) => r.id === reference);
  if (!a || !b) return undefined;
  const clean = (row: PairedContentionRow, i: number) =>
    row.acqPerSec[i]! > 0 && row.failed[i] === 0 && row.lostUpdates[i] === 0;
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(a.acqPerSec.length, b.acqPerSec.length); i++)
    if (clean(a, i) && clean(b, i)) ratios.push(a.acqPerSec[i]! / b.acqPerSec[i]!);
  return pairedRatio(ratios);
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
    clientCpuUsPerAcq: perAcq(results.reduce((s, r) => s + (r.clientCpuMicros ?? 0), 0)),
    cpuUsPerAcq: perAcq(delta.cpuMicros),
    perProcess: results.map((r) => r.acquisitions),
    perProcessP99: results.map((r) => round(summarize([...r.waits, ...r.failedWaits]).p99)),
    shareDeviation: shareDeviation(results.map((r) => r.acquisitions)),
    grantOrder: grantOrder(results.map((r) => r.grants ?? [])),
    handOffsPerAcq: metrics?.handedOver !== undefined ? perAcq(metrics.handedOver) : undefined,
    commandMix,
    metrics,
    firstError: results.find((r) => r.firstError)?.firstError,
    elapsedMs,
  };
}

/** The order of grants across processes, read from the counter values each process wrote. */
export interface GrantOrder {
  /** Longest run of consecutive grants to one process, within `window`. */
  longestRun: number;
  /** Mean run length within `window` (1 = strict alternation between processes). */
  meanRun: number;
  /**
   * Counter values [from, to] over which runs are counted: from the first value by which every
   * process had a grant to the last value before one of them stopped (the start and the end of a
   * run, where some process is not asking yet or any more, are left out). The whole run when a
   * process got no grant at all.
   */
  window: [number, number];
  /** False when two grants wrote the same value (lost updates): the order is then approximate. */
  exact: boolean;
}

/** Max |share − 1/n| / (1/n) over the processes (0: perfectly equal shares). */
export function shareDeviation(perProcess: number[]): number {
  const total = perProcess.reduce((s, n) => s + n, 0);
  if (!total || !perProcess.length) return NaN;
  const equal = total / perProcess.length;
  return round(Math.max(...perProcess.map((n) => Math.abs(n - equal) / equal)));
}

/**
 * Runs of consecutive grants by one process. `grantsByProcess[i]` are the counter values process
 * i wrote; under mutual exclusion the values 1…N are each written once, in grant order.
 */
export function grantOrder(grantsByProcess: number[][]): GrantOrder | undefined {
  const max = Math.max(0, ...grantsByProcess.map((g) => extreme(g, 'max')));
  if (max === 0) return undefined;
  const owner = new Int16Array(max + 1).fill(-1);
  let exact = true;
  grantsByProcess.forEach((values, p) => {
    for (const v of values) {
      if (owner[v] !== -1) exact = false;
      owner[v] = p;
    }
  });
  let from = 1;
  let to = max;
  if (grantsByProcess.every((g) => g.length)) {
    const first = Math.max(...grantsByProcess.map((g) => extreme(g, 'min')));
    const last = Math.min(...grantsByProcess.map((g) => extreme(g, 'max')));
    if (first <= last) [from, to] = [first, last];
  }
  let longestRun = 0;
  let runs = 0;
  let granted = 0;
  let run = 0;
  let previous = -1;
  for (let v = from; v <= to; v++) {
    const p = owner[v]!;
    if (p === -1) {
      // A value nobody wrote (a lost update): the order across it is unknown, start afresh.
      previous = -1;
      run = 0;
      continue;
    }
    granted++;
    if (p === previous) run++;
    else {
      run = 1;
      runs++;
      previous = p;
    }
    longestRun = Math.max(longestRun, run);
  }
  return { longestRun, meanRun: round(granted / Math.max(1, runs)), window: [from, to], exact };
}

/** Smallest or largest value of a possibly long list (no spread into arguments); 0 when empty. */
function extreme(values: number[], which: 'min' | 'max'): number {
  if (!values.length) return 0;
  let out = values[0]!;
  for (const v of values) if (which === 'min' ? v < out : v > out) out = v;
  return out;
}

function sumMetrics(list: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of list) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function roundSummary(s: LatencySummary): LatencySummary {
  return { count: s.count, p50: round(s.p50), p99: round(s.p99), max: round(s.max), mean: round(s.mean) };
}
