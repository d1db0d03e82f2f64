/** Spawns workers/topology-worker.ts processes and runs contention rounds on them (see that file's protocol). */
import { spawnWorker, workerPath, type WorkerProcess } from './spawn-worker';
import { FenceOracle, type ResourceState } from './fence-oracle';
import { recordFigures } from './topology-figures';
import { waitUntil } from './wait';

const WORKER = workerPath('topology-worker.ts');

/** Messages a lock worker sends. */
export type LockWorkerMessage =
  | { type: 'ready'; id: string }
  | { type: 'progress'; acquired: number }
  | { type: 'done'; scope: string; acquired: number; errors: Record<string, number>; lost: number };

/** What the fencing oracle saw in one round. */
export type OracleFigures = Pick<ResourceState, 'entries' | 'overlaps' | 'regressions'>;

/** What one round did, over every worker, and what the oracle saw. */
export interface RoundResult extends OracleFigures {
  acquired: number;
  lost: number;
  errors: Record<string, number>;
}

/** Starts `count` workers on `topology` and waits until each has built its engine. */
export async function spawnLockWorkers(
  count: number,
  env: { topology: unknown; oracleUrl: string; callers: number; holdMs: number; engineOptions?: unknown },
): Promise<WorkerProcess<LockWorkerMessage>[]> {
  const workers = Array.from({ length: count }, (_, i) =>
    spawnWorker<LockWorkerMessage>(WORKER, {
      env: {
        TOPOLOGY: JSON.stringify(env.topology),
        ORACLE_URL: env.oracleUrl,
        WORKER_ID: `w${i}`,
        CALLERS: String(env.callers),
        HOLD_MS: String(env.holdMs),
        ENGINE_OPTIONS: JSON.stringify(env.engineOptions ?? {}),
      },
    }),
  );
  try {
    await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
  } catch (err) {
    await stopLockWorkers(workers);
    throw err;
  }
  return workers;
}

/** Total acquisitions of the current round as last reported by the workers' progress messages. */
export function progress(workers: readonly WorkerProcess<LockWorkerMessage>[]): number {
  let total = 0;
  for (const w of workers) {
    const last = [...w.messages].reverse().find((m) => m.type === 'progress' || m.type === 'done');
    if (last) total += (last as { acquired: number }).acquired;
  }
  return total;
}

/** Starts a round on every worker, runs `during` (faults, waiting for progress), stops and sums up. */
export async function runRound(
  workers: readonly WorkerProcess<LockWorkerMessage>[],
  oracle: FenceOracle,
  scope: string,
  key: string,
  during: () => Promise<unknown>,
): Promise<RoundResult> {
  for (const w of workers) w.send({ type: 'run', scope, key });
  try {
    await during();
  } finally {
    for (const w of workers) w.send({ type: 'stop', scope });
  }
  const done = await Promise.all(
    workers.map((w) =>
      w.waitForMessage<Extract<LockWorkerMessage, { type: 'done' }>>(
        (m) => m.type === 'done' && m.scope === scope,
        60_000,
      ),
    ),
  );
  const errors: Record<string, number> = {};
  for (const d of done)
    for (const [name, n] of Object.entries(d.errors)) errors[name] = (errors[name] ?? 0) + n;
  return {
    ...(await oracleFigures(oracle, scope)),
    acquired: done.reduce((n, d) => n + d.acquired, 0),
    lost: done.reduce((n, d) => n + d.lost, 0),
    errors,
  };
}

/** Asks every worker to close its engine and exit; kills the ones that do not. */
export async function stopLockWorkers(workers: readonly WorkerProcess<LockWorkerMessage>[]): Promise<void> {
  for (const w of workers) w.send({ type: 'exit' });
  await Promise.all(
    workers.map(async (w) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([w.exited, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
      clearTimeout(timer);
      if (w.running) await w.stop();
    }),
  );
}

/** The oracle's counts of `scope`: critical sections entered, overlaps and token regressions. */
export async function oracleFigures(oracle: FenceOracle, scope: string): Promise<OracleFigures> {
  const { entries, overlaps, regressions } = await oracle.state(scope);
  return { entries, overlaps, regressions };
}

/**
 * The baseline of every topology: the workers contend for one key until they made `grants`; the oracle
 * saw no overlap and no token regression, and every grant entered it. Records the round's figures.
 */
export async function expectBaselineRound(
  workers: readonly WorkerProcess<LockWorkerMessage>[],
  oracle: FenceOracle,
  topology: string,
  { scope, grants, figures }: { scope: string; grants: number; figures: string },
): Promise<RoundResult> {
  const result = await runRound(workers, oracle, scope, 'shared', () =>
    waitUntil(() => progress(workers) >= grants, {
      timeoutMs: 90_000,
      intervalMs: 100,
      description: `${grants} grants`,
    }),
  );
  recordFigures(topology, figures, result);
  expect(result.overlaps).toBe(0);
  expect(result.regressions).toBe(0);
  expect(result.entries).toBe(result.acquired);
  expect(result.acquired).toBeGreaterThanOrEqual(grants);
  return result;
}
