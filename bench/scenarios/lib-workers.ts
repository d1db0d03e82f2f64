import { spawnWorker, type WorkerProcess } from '../../test/support/spawn-worker';
import type { LibraryId } from '../adapters';
import type { BenchProfile } from '../config';
import { RedisTarget } from '../redis-target';
import type { ContentionResult, WorkerMessage, WorkerTask } from '../worker/protocol';
import { contentionFigures, type ContentionFigures } from './figures';

/** One worker process driving one library (bench/worker/lib-worker.ts). */
export type LibWorker = WorkerProcess<WorkerMessage>;
let nextId = 1;

/** Sends `task` to `worker` and resolves with its result (rejects with the worker's error). */
export async function run<R>(worker: LibWorker, task: WorkerTask, timeoutMs: number): Promise<R> {
  const id = nextId++;
  worker.send({ type: 'run', id, task });
  const reply = await worker.waitForMessage(
    (m) => (m.type === 'done' || m.type === 'failed') && m.id === id,
    timeoutMs,
  );
  if (reply.type === 'failed') throw new Error(`worker ${worker.pid}: ${reply.message}`);
  return (reply as Extract<WorkerMessage, { type: 'done' }>).result as R;
}

/** `count` worker processes of library `id`, each warming up before it says it is ready. */
export function spawnLibWorkers(id: LibraryId, count: number, target: RedisTarget): LibWorker[] {
  return Array.from({ length: count }, (_, i) =>
    spawnWorker<WorkerMessage>('bench/worker/lib-worker.ts', {
      env: { BENCH_LIB: id, BENCH_REDIS_URL: target.url, BENCH_WORKER_INDEX: String(i) },
    }),
  );
}

/** Resolves with the library's display name once every worker is ready. */
export async function ready(workers: LibWorker[]): Promise<string> {
  const msgs = await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 120_000)));
  return (msgs[0] as Extract<WorkerMessage, { type: 'ready' }>).name;
}

export async function stopAll(workers: LibWorker[]): Promise<void> {
  for (const w of workers) w.send({ type: 'exit' });
  await Promise.all(workers.map((w) => w.stop(8_000)));
}

/**
 * One contention run on `workers` (one library's processes): every caller of every process on one
 * key for `durationMs`, or until the counter reaches `stopAt`; the figures combine what the workers
 * saw with Redis' counters.
 */
export async function contentionRun(
  workers: LibWorker[],
  target: RedisTarget,
  profile: BenchProfile,
  csMs: number,
  durationMs: number,
  stopAt: number,
): Promise<ContentionFigures> {
  const { contention: c, waitMs } = profile;
  await target.clean();
  const counterKey = 'bench:counter';
  await target.admin.set(counterKey, 0);
  const before = await target.snapshot();
  const task: WorkerTask = {
    kind: 'contention',
    callers: c.callersPerProcess,
    csMs,
    // Every process starts at once, after each has received the task.
    startAt: Date.now() + 500,
    durationMs,
    target: stopAt,
    lockKey: 'bench:hot',
    counterKey,
    waitMs,
  };
  const results = await Promise.all(
    workers.map((w) => run<ContentionResult>(w, task, durationMs + 2 * waitMs + 60_000)),
  );
  const after = await target.snapshot();
  const counter = Number(await target.admin.get(counterKey));
  return contentionFigures(csMs, results, RedisTarget.delta(before, after), counter);
}
