/** Latency summary in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** The q-quantile (0..1) of already sorted values, nearest-rank. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of `values` (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** p50 / p99 / max / mean of `values` (milliseconds). */
export function summarize(values: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

/** Rounds for display and JSON: 3 significant decimals below 10, fewer above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A ratio taken round by round (paired: both sides measured in the same round): its median and spread. */
export interface PairedRatio {
  median: number;
  min: number;
  max: number;
  /** Rounds in which both sides were measured. */
  rounds: number;
  /** The ratio of every such round, in round order. */
  perRound: number[];
}

/** The median and min–max of ratios taken round by round; undefined without any round. */
export function pairedRatio(perRound: readonly number[]): PairedRatio | undefined {
  if (!perRound.length) return undefined;
  return {
    median: round(median(perRound)),
    min: round(Math.min(...perRound)),
    max: round(Math.max(...perRound)),
    rounds: perRound.length,
    perRound: perRound.map(round),
  };
}
