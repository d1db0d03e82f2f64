/**
 * The failover-under-load scenario shared by the Cluster and Sentinel specs: a round of the lock
 * workers against the fencing oracle, the master killed once 50 grants are in, then 100 more grants
 * after a replica took over. Records the figures and asserts what must hold through a failover.
 */
import type { RedisServerProcess } from './redis-server';
import type { WorkerProcess } from './spawn-worker';
import { waitUntil } from './wait';
import type { FenceOracle } from './fence-oracle';
import { recordFigures } from './topology-figures';
import { progress, runRound, type LockWorkerMessage, type RoundResult } from './topology-workers';

/** The topology-specific parts of the scenario. */
export interface FailoverUnderLoad {
  workers: readonly WorkerProcess<LockWorkerMessage>[];
  oracle: FenceOracle;
  /** Scope of the round (the oracle's and the workers' label). */
  scope: string;
  /** The user key every worker contends for. */
  key: string;
  /** The master to SIGKILL. */
  victim: RedisServerProcess;
  /** Resolves once a replica has taken over from the killed master. */
  promoted: () => Promise<unknown>;
  /** Where the figures go: `recordFigures(figures.file, figures.name, …)`. */
  figures: { file: string; name: string };
}

/** Runs the scenario; returns the round's result once its assertions passed. */
export async function expectFailoverUnderLoad(scenario: FailoverUnderLoad): Promise<RoundResult> {
  const { workers, victim } = scenario;
  let killedAt = 0;
  let promotedAfterMs = 0;
  let resumedAfterMs = 0;
  const result = await runRound(workers, scenario.oracle, scenario.scope, scenario.key, async () => {
    await waitUntil(() => progress(workers) >= 50, {
      timeoutMs: 60_000,
      intervalMs: 50,
      description: 'load before the kill',
    });
    killedAt = Date.now();
    victim.kill();
    await victim.exited;
    await scenario.promoted();
    promotedAfterMs = Date.now() - killedAt;
    const before = progress(workers);
    await waitUntil(() => progress(workers) >= before + 100, {
      timeoutMs: 90_000,
      intervalMs: 50,
      description: '100 grants after the failover',
    });
    resumedAfterMs = Date.now() - killedAt;
  });
  recordFigures(scenario.figures.file, scenario.figures.name, { ...result, promotedAfterMs, resumedAfterMs });
  expect(result.regressions).toBe(0);
  expect(result.entries).toBe(result.acquired);
  const allowed = ['LockRedisError', 'LockNotAcquiredError', 'LockLostError'];
  expect(Object.keys(result.errors).filter((name) => !allowed.includes(name))).toEqual([]);
  return result;
}
