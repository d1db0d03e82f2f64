import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createLockEngine } from '../../lib/core';
import type { BenchProfile } from '../config';
import type { RedisTarget } from '../redis-target';
import type { FloodFigures } from '../report/results';

/**
 * Floods (RELIABILITY.md scenario 20): `profile.flood.waiters` callers wait for one busy key in this
 * process; half give up by `waitMs`, half by one AbortSignal they share (aborted at the same moment).
 * Measures how long enqueueing takes, how late after the deadline the last waiter settles, the
 * event-loop lag meanwhile, the heap per waiter, and whether Node warned about listeners. The test
 * suite (test/reliability/flood.spec.ts) checks the same flood settles cleanly, without timings.
 */
export async function runFlood(
  target: RedisTarget,
  profile: BenchProfile,
  log: (line: string) => void,
): Promise<FloodFigures> {
  await target.clean();
  const { waiters: n, waitMs } = profile.flood;
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  const engine = createLockEngine({
    redis: target.url,
    keyPrefix: 'bench:flood:',
    maxWaitersPerKey: n,
  });
  try {
    const holder = await engine.acquire('k', { waitMs: 0 });
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const shared = new AbortController();
    const started = performance.now();
    let lastSettled = 0;
    const settle = () => {
      lastSettled = performance.now();
    };
    const calls = Array.from({ length: n }, (_, i) =>
      engine
        .acquire('k', i % 2 === 0 ? { waitMs } : { waitMs: 10 * waitMs, signal: shared.signal })
        .then(
          (h) => h.release(),
          () => undefined,
        )
        .finally(settle),
    );
    const enqueued = performance.now();
    const heapPerWaiter = Math.round((process.memoryUsage().heapUsed - heapBefore) / n);
    // The shared signal fires when the first half's waitMs runs out (both halves end together).
    const abortAt = started + waitMs;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, abortAt - performance.now())));
    shared.abort(new Error('gave up'));
    await Promise.all(calls);
    lag.disable();
    await holder.release();
    const figures: FloodFigures = {
      waiters: n,
      waitMs,
      enqueueMs: Math.round(enqueued - started),
      lastSettledAfterDeadlineMs: Math.round(lastSettled - (started + waitMs)),
      maxLoopLagMs: Math.round(lag.max / 1e6),
      p99LoopLagMs: Math.round(lag.percentile(99) / 1e6),
      heapBytesPerWaiter: heapPerWaiter,
      listenerWarnings: warnings.filter((w) => w === 'MaxListenersExceededWarning').length,
      waitingLocksAfter: engine.stats().waitingLocks,
    };
    log(
      `  ${n} waiters on one key: enqueued in ${figures.enqueueMs} ms, last settled ${figures.lastSettledAfterDeadlineMs} ms ` +
        `after the deadline, event-loop lag max ${figures.maxLoopLagMs} ms (p99 ${figures.p99LoopLagMs} ms), ` +
        `~${heapPerWaiter} B heap/waiter, ${figures.listenerWarnings} listener warning(s)`,
    );
    return figures;
  } finally {
    process.off('warning', onWarning);
    await engine.close();
  }
}
