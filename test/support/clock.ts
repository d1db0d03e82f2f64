/**
 * One high-resolution clock that several processes on this host can compare: the process' time
 * origin (wall clock, taken once at start-up) plus its monotonic clock. Neither Date.now() spies
 * nor wall-clock steps after start-up move it, so fault figures stay meaningful in every scenario.
 */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Rounds a duration for reports (0.1 ms). */
export function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** min / median / p99 / max of a list of durations (ms), rounded; empty list → zeros. */
export function summarize(values: readonly number[]): {
  n: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
} {
  if (values.length === 0) return { n: 0, min: 0, p50: 0, p99: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    n: sorted.length,
    min: round1(sorted[0]!),
    p50: round1(at(0.5)),
    p99: round1(at(0.99)),
    max: round1(sorted[sorted.length - 1]!),
  };
}
