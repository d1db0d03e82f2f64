import type { LibraryId } from '../adapters';
import type { BenchProfile } from '../config';
import { RedisTarget } from '../redis-target';
import { pairedRatio, round } from '../stats';
import type { UncontendedResult, WorkerTask } from '../worker/protocol';
import type { ContentionFigures, UncontendedFigures } from './figures';
import { contentionRun, ready, run, spawnLibWorkers, stopAll, type LibWorker } from './lib-workers';

export type { ContentionFigures, LibraryFigures, UncontendedFigures } from './figures';

/** One uncontended trial of one library's worker: its figures, from the worker's and Redis' counters. */
async function uncontendedTrial(
  id: LibraryId,
  worker: LibWorker,
  target: RedisTarget,
  profile: BenchProfile,
  callers: number,
  durationMs: number,
): Promise<UncontendedFigures> {
  const { uncontended: u, waitMs } = profile;
  const task: WorkerTask = {
    kind: 'uncontended',
    callers,
    durationMs,
    maxOps: u.maxOps,
    keyPrefix: `bench:free:${id}`,
    waitMs,
  };
  const before = await target.snapshot();
  const r = await run<UncontendedResult>(worker, task, durationMs + waitMs + 30_000);
  const delta = RedisTarget.delta(before, await target.snapshot());
  const ops = Math.max(1, r.ops);
  return {
    callers,
    opsPerSec: round(r.ops / (r.elapsedMs / 1000)),
    p50Ms: round(r.latency.p50),
    p99Ms: round(r.latency.p99),
    errors: r.errors,
    clientCmdsPerOp: round(r.clientCommands / ops),
    clientCpuUsPerOp: round(r.clientCpuMicros / ops),
    cmdsPerOp: round(delta.totalCommands / ops),
    cpuUsPerOp: round(delta.cpuMicros / ops),
    trialsOpsPerSec: [],
  };
}

/**
 * The uncontended loops of every library, one worker process each, trials taken round-robin
 * (library A, B, C…, then A, B, C… again) so that a noisy stretch of a shared machine hits every
 * library alike; the median trial is kept. Libraries whose worker does not start are left out.
 * Then, for `paired` (our engine's rows and the raw lock, issue 46), rounds of those alone back to
 * back, each ratio to the raw lock taken within its round (`vsRaw`).
 */
export async function runUncontendedRounds(
  ids: LibraryId[],
  target: RedisTarget,
  profile: BenchProfile,
  log: (line: string) => void,
  paired?: { raw: LibraryId; ours: LibraryId[] },
): Promise<Map<LibraryId, { name: string; uncontended: UncontendedFigures[] }>> {
  const { uncontended: u } = profile;
  await target.clean();
  const workers = new Map<LibraryId, { worker: LibWorker; name: string }>();
  const spawned = ids.map((id) => ({ id, worker: spawnLibWorkers(id, 1, target)[0]! }));
  try {
    for (const { id, worker } of spawned) {
      try {
        workers.set(id, { worker, name: await ready([worker]) });
      } catch (err) {
        log(
          `  ${id}: worker did not start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
        );
      }
    }
    const trials = new Map<string, UncontendedFigures[]>();
    for (let t = 0; t < u.trials; t++) {
      for (const callers of u.callers) {
        for (const [id, { worker }] of workers) {
          const figures = await uncontendedTrial(id, worker, target, profile, callers, u.durationMs);
          const key = `${id}|${callers}`;
          trials.set(key, [...(trials.get(key) ?? []), figures]);
        }
      }
    }
    const out = new Map<LibraryId, { name: string; uncontended: UncontendedFigures[] }>();
    for (const [id, { name }] of workers) {
      const figures = u.callers.map((callers) => {
        const list = trials.get(`${id}|${callers}`) ?? [];
        const sorted = [...list].sort((a, b) => a.opsPerSec - b.opsPerSec);
        return { ...sorted[Math.floor(sorted.length / 2)]!, trialsOpsPerSec: list.map((x) => x.opsPerSec) };
      });
      out.set(id, { name, uncontended: figures });
      log(
        `  ${name}: ${figures.map((f) => `x${f.callers}: ${f.opsPerSec} ops/s (trials ${f.trialsOpsPerSec.join(', ')})`).join('; ')}`,
      );
    }
    if (paired) await pairedRounds(paired, workers, out, target, profile, log);
    return out;
  } finally {
    await stopAll(spawned.map((s) => s.worker));
  }
}

/**
 * Issue 46's rows against the raw lock, paired: `pairedRounds` rounds per caller count, each running
 * the raw lock and our rows back to back (the order rotated by one every round, so none always runs
 * first or right after another), each of our figures divided by the raw lock's of the same round.
 * A noisy stretch of the machine then hits both sides of a ratio alike. The medians go into `vsRaw`
 * of our rows' figures.
 */
async function pairedRounds(
  paired: { raw: LibraryId; ours: LibraryId[] },
  workers: Map<LibraryId, { worker: LibWorker; name: string }>,
  out: Map<LibraryId, { name: string; uncontended: UncontendedFigures[] }>,
  target: RedisTarget,
  profile: BenchProfile,
  log: (line: string) => void,
): Promise<void> {
  const { uncontended: u } = profile;
  const ours = paired.ours.filter((id) => workers.has(id));
  if (!workers.has(paired.raw) || !ours.length || u.pairedRounds < 1) return;
  const order = [paired.raw, ...ours];
  log(
    `\n[uncontended, paired] ${order.join(', ')}: ${u.pairedRounds} rounds of ${u.pairedMs} ms each per caller count`,
  );
  for (const callers of u.callers) {
    const ratios = new Map(
      ours.map((id) => [id, { ops: [] as number[], client: [] as number[], redis: [] as number[] }]),
    );
    for (let r = 0; r < u.pairedRounds; r++) {
      const rotated = [...order.slice(r % order.length), ...order.slice(0, r % order.length)];
      const round = new Map<LibraryId, UncontendedFigures>();
      for (const id of rotated) {
        round.set(
          id,
          await uncontendedTrial(id, workers.get(id)!.worker, target, profile, callers, u.pairedMs),
        );
      }
      const raw = round.get(paired.raw)!;
      for (const id of ours) {
        const mine = round.get(id)!;
        const into = ratios.get(id)!;
        if (mine.errors || raw.errors) continue;
        into.ops.push(mine.opsPerSec / raw.opsPerSec);
        into.client.push(mine.clientCpuUsPerOp / raw.clientCpuUsPerOp);
        into.redis.push(mine.cpuUsPerOp / raw.cpuUsPerOp);
      }
      log(
        `  x${callers} round ${r + 1}/${u.pairedRounds}: ` +
          rotated.map((id) => `${id} ${round.get(id)!.opsPerSec} ops/s`).join(', '),
      );
    }
    for (const id of ours) {
      const into = ratios.get(id)!;
      const ops = pairedRatio(into.ops);
      const clientCpu = pairedRatio(into.client);
      const redisCpu = pairedRatio(into.redis);
      const figures = out.get(id)?.uncontended.find((f) => f.callers === callers);
      if (!figures || !ops || !clientCpu || !redisCpu) continue;
      figures.vsRaw = { ops, clientCpu, redisCpu };
      log(
        `  ${id} x${callers} vs raw, median (min–max) of ${ops.rounds} rounds: ops/s ${ops.median} (${ops.min}–${ops.max}), ` +
          `client CPU ${clientCpu.median} (${clientCpu.min}–${clientCpu.max}), Redis CPU ${redisCpu.median} (${redisCpu.min}–${redisCpu.max})`,
      );
    }
  }
}

/**
 * The contention scenario for one library: `processes` worker processes, `callersPerProcess`
 * callers each, all on one key, once per critical-section length.
 */
export async function runContentionSuite(
  id: LibraryId,
  target: RedisTarget,
  profile: BenchProfile,
  log: (line: string) => void,
): Promise<{ name: string; contention: ContentionFigures[] }> {
  const { contention: c } = profile;
  await target.clean();
  const workers = spawnLibWorkers(id, c.processes, target);
  try {
    const name = await ready(workers);
    const contention: ContentionFigures[] = [];
    for (const csMs of c.csMs) {
      const fig = await contentionRun(workers, target, profile, csMs, c.durationMs, c.target);
      contention.push(fig);
      log(
        `  ${name}: contention cs=${csMs}ms: ${fig.acquisitions} acq, ${fig.acqPerSec}/s, wait p99 ${fig.wait.p99} ms, ` +
          `${fig.cmdsPerAcq} cmds/acq, ${fig.cpuUsPerAcq} µs CPU/acq, lost ${fig.lostUpdates}, failed ${fig.failed}, ` +
          `per process ${fig.perProcess.join('/')}, longest run ${fig.grantOrder?.longestRun ?? '–'}` +
          (fig.handOffsPerAcq !== undefined ? `, hand-offs/acq ${fig.handOffsPerAcq}` : ''),
      );
    }
    return { name, contention };
  } finally {
    await stopAll(workers);
  }
}
