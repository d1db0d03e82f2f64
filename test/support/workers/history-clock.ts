/*
 * The clock of the "every holder told" history (history-worker.ts and holder-history.spec.ts): the
 * monotonic clock plus an offset to the wall clock measured in this process, so that times taken in
 * different processes on the host compare to a few microseconds.
 *
 * Why not clock.ts' epochMs() (performance.timeOrigin + performance.now()): timeOrigin is taken once
 * at start-up, and on a loaded host it was seen up to 20 ms off the wall clock (one process in twelve
 * started at once; one worker in ten runs of this spec, by some 5 ms). That is more than the margins the
 * spec measures, and it put a later token before an earlier one. The offset here is measured against
 * Date.now() where it ticks over: at that instant the wall clock reads exactly a whole millisecond.
 */

/** Tick-overs watched; the one seen in the narrowest window (least preempted) sets the offset. */
const TICKS = 5;

/** Wall-clock time minus performance.now(), measured at a few ticks of Date.now(). */
function measureOffset(): number {
  let best = { window: Number.POSITIVE_INFINITY, offset: 0 };
  for (let seen = 0; seen < TICKS; seen++) {
    let before = performance.now();
    let ms = Date.now();
    for (;;) {
      const p = performance.now();
      const now = Date.now();
      const after = performance.now();
      if (now !== ms) {
        // The wall clock read exactly `now` at some instant between `before` and `after`.
        if (after - before < best.window)
          best = { window: after - before, offset: now - (before + after) / 2 };
        break;
      }
      before = p;
      ms = now;
    }
  }
  return best.offset;
}

const offset = measureOffset();

/** Epoch milliseconds with sub-millisecond precision, monotonic, comparable across processes on the host. */
export function historyEpochMs(): number {
  return performance.now() + offset;
}
