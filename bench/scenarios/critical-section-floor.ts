import Redis from 'ioredis';
import type { BenchLock } from '../adapters/bench-lock';
import type { BenchProfile } from '../config';
import { RedisTarget } from '../redis-target';
import { round } from '../stats';
import { runContention } from '../worker/loops';

/** What the contention scenario's critical section alone costs Redis (no distributed lock at all). */
export interface FloorFigures {
  csMs: number;
  acquisitions: number;
  /** Acquisitions per second: the critical section one at a time, at no lock cost (the ceiling of any lock). */
  acqPerSec: number;
  /** Redis CPU per critical section (its GET + SET, one at a time): the floor under any lock's figure. */
  cpuUsPerAcq: number;
  cmdsPerAcq: number;
  /** The single measurements the figure is the mean of. */
  runs?: number[];
}

/** The mean of two floor measurements of the same critical section. */
export function meanFloor(a: FloorFigures, b: FloorFigures): FloorFigures {
  return {
    csMs: a.csMs,
    acquisitions: a.acquisitions + b.acquisitions,
    acqPerSec: round((a.acqPerSec + b.acqPerSec) / 2),
    cpuUsPerAcq: round((a.cpuUsPerAcq + b.cpuUsPerAcq) / 2),
    cmdsPerAcq: round((a.cmdsPerAcq + b.cmdsPerAcq) / 2),
    runs: [a.cpuUsPerAcq, b.cpuUsPerAcq],
  };
}

/** A FIFO mutex inside this process: mutual exclusion with no Redis command at all. */
class InProcessMutex implements BenchLock {
  readonly name = 'in-process mutex (floor)';
  private tail: Promise<void> = Promise.resolve();

  async acquire(): Promise<() => Promise<void>> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return async () => release();
  }

  async close(): Promise<void> {}
}

/**
 * Runs the contention loop with all callers in this process behind an in-process mutex: the
 * critical sections still run one at a time against Redis, so Redis CPU per acquisition here is
 * what the GET + SET themselves cost, the part of every library's figure no lock can remove.
 */
export async function runCriticalSectionFloor(
  target: RedisTarget,
  profile: BenchProfile,
): Promise<FloorFigures[]> {
  const { contention: c } = profile;
  const counter = new Redis(target.url);
  const out: FloorFigures[] = [];
  try {
    for (const csMs of c.csMs)
      out.push(await floorRun(target, profile, counter, csMs, c.durationMs, c.target));
  } finally {
    await counter.quit();
  }
  return out;
}

/**
 * One run of the critical section alone (see runCriticalSectionFloor): as many callers as the
 * contention runs have in all, for `durationMs` or until the counter reaches `stopAt`, the counter
 * read and written through `counter`.
 */
export async function floorRun(
  target: RedisTarget,
  profile: BenchProfile,
  counter: Redis,
  csMs: number,
  durationMs: number,
  stopAt: number,
): Promise<FloorFigures> {
  const { contention: c } = profile;
  await target.admin.set('bench:counter', 0);
  const before = await target.snapshot();
  const result = await runContention(
    new InProcessMutex(),
    {
      kind: 'contention',
      callers: c.processes * c.callersPerProcess,
      csMs,
      startAt: Date.now(),
      durationMs,
      target: stopAt,
      lockKey: 'bench:floor',
      counterKey: 'bench:counter',
      waitMs: profile.waitMs,
    },
    counter,
  );
  const delta = RedisTarget.delta(before, await target.snapshot());
  const n = Math.max(1, result.acquisitions);
  return {
    csMs,
    acquisitions: result.acquisitions,
    acqPerSec: round((result.acquisitions * 1000) / Math.max(1, result.finishedMs)),
    cpuUsPerAcq: round(delta.cpuMicros / n),
    cmdsPerAcq: round(delta.totalCommands / n),
  };
}
