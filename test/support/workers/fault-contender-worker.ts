/*
 * Contention baseline: LOOPS concurrent loops in this process each take the lock of KEY
 * ITERATIONS times. Inside each critical section the loop enters the oracle's occupancy counter
 * (more than one inside = overlap) and writes with its fencing token (a stale token = a token
 * regression or an overlap). Protocol: runOnGo (worker-io.ts); the report is a ContenderReport.
 * Env: REDIS_URL, STORE_URL, KEY, LOOPS, ITERATIONS, WORKER_NAME.
 */
import { createLockEngine } from '../../../lib/core';
import { requiredEnv, runOnGo } from '../worker-io';
import { FenceOracle } from '../fence-oracle';

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

const name = requiredEnv('WORKER_NAME');
const key = requiredEnv('KEY');
const loops = Number(requiredEnv('LOOPS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const engine = createLockEngine({ redis: requiredEnv('REDIS_URL'), commandTimeoutMs: 5000 });
const store = new FenceOracle(requiredEnv('STORE_URL'));
const report: ContenderReport = {
  type: 'done',
  name,
  acquisitions: 0,
  overlaps: 0,
  staleWrites: 0,
  tokenRegressions: 0,
  waitsMs: [],
  errors: [],
};
let lastToken = 0;

async function loop(): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    const asked = performance.now();
    try {
      await engine.using(key, { waitMs: 120_000 }, async (lock) => {
        report.waitsMs.push(performance.now() - asked);
        report.acquisitions++;
        if (lock.fencingToken <= lastToken) report.tokenRegressions++;
        lastToken = lock.fencingToken;
        const holder = `${name}:${lock.fencingToken}`;
        if ((await store.enter(key, lock.fencingToken, holder)) !== 1) report.overlaps++;
        if (!(await store.write(key, lock.fencingToken, name)).accepted) report.staleWrites++;
        await store.exit(key, holder);
      });
    } catch (err) {
      report.errors.push(`${(err as Error).name}: ${(err as Error).message}`);
    }
  }
}

runOnGo({
  run: async () => {
    await Promise.all(Array.from({ length: loops }, loop));
    return report as unknown as Record<string, unknown>;
  },
  close: async () => {
    await engine.close();
    await store.close();
  },
});
