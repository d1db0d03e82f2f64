/**
 * Scenario 1 (short baseline; the big contention run lives with the benchmarks): several
 * processes with several concurrent callers each take one lock over and over. The oracle on its
 * own Redis sees every critical section: at most one inside at a time, every fencing token
 * larger than the last accepted one, and every acquisition accounted for.
 */
import { summarize } from '../support/clock';
import { expectCleanRedis } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { spawnWorker, workerPath, WorkerProcess } from '../support/spawn-worker';
import type { ContenderReport } from '../support/workers/fault-contender-worker';

const env = useFaultEnv();
const figures = faultFigures();
const PROCESSES = 3;
const LOOPS = 4;
const ITERATIONS = 100;

describe('scenario 1: contention baseline', () => {
  it(`never lets two of ${PROCESSES * LOOPS} callers in ${PROCESSES} processes inside at once over ${PROCESSES * LOOPS * ITERATIONS} acquisitions`, async () => {
    const key = 'contention';
    const workers: WorkerProcess[] = [];
    try {
      for (let p = 0; p < PROCESSES; p++) {
        workers.push(
          spawnWorker(workerPath('fault-contender-worker.ts'), {
            env: {
              WORKER_NAME: `p${p}`,
              REDIS_URL: env.redis.url,
              STORE_URL: env.storeServer.url,
              KEY: key,
              LOOPS: String(LOOPS),
              ITERATIONS: String(ITERATIONS),
            },
          }),
        );
      }
      await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
      for (const w of workers) w.send({ type: 'go' });
      const reports = await Promise.all(
        workers.map((w) => w.waitForMessage<ContenderReport>((m) => m.type === 'done', 180_000)),
      );
      const total = PROCESSES * LOOPS * ITERATIONS;
      expect(reports.flatMap((r) => r.errors)).toEqual([]);
      expect(reports.reduce((n, r) => n + r.acquisitions, 0)).toBe(total);
      expect(reports.map((r) => [r.overlaps, r.staleWrites, r.tokenRegressions])).toEqual(
        reports.map(() => [0, 0, 0]),
      );
      const oracle = await env.store.state(key);
      expect(oracle).toMatchObject({ accepted: total, rejected: 0, maxOccupancy: 1 });
      for (const w of workers) expect(w.stderr()).not.toMatch(/Unhandled|UnhandledPromiseRejection/);
      await expectCleanRedis(env.admin);
      const waits = summarize(reports.flatMap((r) => r.waitsMs));
      figures.record('1-contention-baseline', {
        title: `${PROCESSES} processes × ${LOOPS} callers, ${total} acquisitions of one key`,
        acquisitions: total,
        overlaps: 0,
        staleOrRegressedTokens: 0,
        maxInsideAtOnce: oracle.maxOccupancy,
        waitMs: waits,
      });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  }, 240_000);
});
