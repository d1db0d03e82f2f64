import Redis from 'ioredis';
import type { BenchLock } from '../adapters/bench-lock';
import { sleep, summarize } from '../stats';
import { commandsSent } from './command-counter';
import type { ContentionResult, ContentionTask, UncontendedResult, UncontendedTask } from './protocol';

/** `callers` loops of acquire + release, each on its own key, for a fixed time or count. */
export async function runUncontended(
  lock: BenchLock,
  task: UncontendedTask,
  workerIndex: number,
): Promise<UncontendedResult> {
  const latencies: number[] = [];
  let errors = 0;
  const commandsBefore = commandsSent();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + task.durationMs;
  const caller = async (i: number) => {
    const key = `${task.keyPrefix}:${workerIndex}:${i}`;
    while (performance.now() < deadline && latencies.length < task.maxOps) {
      const t0 = performance.now();
      try {
        const release = await lock.acquire(key, task.waitMs);
        await release();
        latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: task.callers }, (_, i) => caller(i)));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    ops: latencies.length,
    errors,
    elapsedMs,
    latency: summarize(latencies),
    clientCommands: commandsSent() - commandsBefore,
    clientCpuMicros: cpu.user + cpu.system,
  };
}

/**
 * `callers` loops on ONE key: acquire, then the non-atomic read-modify-write of a Redis counter
 * (GET, `csMs` of work, SET), then release. A lock that lets two holders overlap loses updates.
 * Stops at the deadline, or once the counter written reaches `target` (the counter is the lock's
 * own protected state, so no extra commands are needed to coordinate the stop). The values written
 * are kept (`grants`): they give the order of grants across processes without any extra command.
 */
export async function runContention(
  lock: BenchLock,
  task: ContentionTask,
  counter: Redis,
): Promise<ContentionResult> {
  const waits: number[] = [];
  const failedWaits: number[] = [];
  const grants: number[] = [];
  let acquisitions = 0;
  let releaseErrors = 0;
  let firstError: string | undefined;
  let done = false;
  const deadline = task.startAt + task.durationMs;
  await sleep(Math.max(0, task.startAt - Date.now()));
  const commandsBefore = commandsSent();
  const cpuBefore = process.cpuUsage();
  const metricsBefore = lock.metrics?.();
  const caller = async () => {
    while (!done && Date.now() < deadline) {
      const t0 = performance.now();
      let release;
      try {
        release = await lock.acquire(task.lockKey, task.waitMs);
      } catch (err) {
        failedWaits.push(performance.now() - t0);
        firstError ??= err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        continue;
      }
      waits.push(performance.now() - t0);
      const value = Number((await counter.get(task.counterKey)) ?? 0);
      if (task.csMs > 0) await sleep(task.csMs);
      await counter.set(task.counterKey, value + 1);
      acquisitions++;
      grants.push(value + 1);
      try {
        await release();
      } catch {
        releaseErrors++;
      }
      if (value + 1 >= task.target) done = true;
    }
  };
  await Promise.all(Array.from({ length: task.callers }, caller));
  const cpu = process.cpuUsage(cpuBefore);
  return {
    acquisitions,
    failures: failedWaits.length,
    releaseErrors,
    waits,
    failedWaits,
    finishedMs: Date.now() - task.startAt,
    clientCommands: commandsSent() - commandsBefore,
    // The critical section's own GET + SET are in it too, the same for every library.
    clientCpuMicros: cpu.user + cpu.system,
    grants,
    metrics: metricsBefore && diffMetrics(metricsBefore, lock.metrics!()),
    firstError,
  };
}

function diffMetrics(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}
