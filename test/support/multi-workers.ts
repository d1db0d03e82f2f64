/*
 * Runs the counter workers (workers/counter-worker.ts) on several keys and checks what they leave
 * in Redis: per key, the counter equals the increments the workers made (no lost update), and the
 * fencing tokens recorded inside the sections strictly increase.
 */
import { spawnWorker, workerPath, WorkerProcess } from './spawn-worker';

const WORKER = workerPath('counter-worker.ts');

/** What one worker reports at the end. */
export interface MultiDone {
  type: 'done';
  sections: number;
  increments: Record<string, number>;
  timeouts: number;
  lost: number;
}

/** One group of worker processes with the same settings. */
export interface WorkerGroup {
  processes: number;
  env: Record<string, string>;
}

/** Data a run left behind, read with `read(key)`. */
export interface DataReader {
  get(key: string): Promise<string | null>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
}

/** Spawns every group, starts them together, and returns their reports. */
export async function runMultiWorkers(
  groups: WorkerGroup[],
  common: Record<string, string>,
): Promise<MultiDone[]> {
  const workers: WorkerProcess[] = [];
  try {
    for (const g of groups) {
      for (let i = 0; i < g.processes; i++)
        workers.push(spawnWorker(WORKER, { env: { ...common, ...g.env } }));
    }
    await Promise.all(
      workers.map((w) => w.waitForMessage((m) => m.type === 'ready' || m.type === 'error', 90_000)),
    );
    for (const w of workers) expect(w.messages.find((m) => m.type === 'error')).toBeUndefined();
    for (const w of workers) w.send({ type: 'go' });
    const done = await Promise.all(
      workers.map((w) => w.waitForMessage((m) => m.type === 'done' || m.type === 'error', 240_000)),
    );
    for (const d of done) expect(d).toMatchObject({ type: 'done' });
    const statuses = await Promise.all(workers.map((w) => w.exited));
    for (const status of statuses) expect(status).toEqual({ code: 0, signal: null });
    return done as MultiDone[];
  } finally {
    await Promise.all(workers.filter((w) => w.running).map((w) => w.stop()));
  }
}

/** Checks counters and tokens of every key; returns how many sections touched each key. */
export async function expectConsistent(
  reader: DataReader,
  dataPrefix: string,
  keys: string[],
  done: MultiDone[],
): Promise<Record<string, number>> {
  const perKey: Record<string, number> = {};
  for (const key of keys) {
    const expected = done.reduce((sum, d) => sum + (d.increments[key] ?? 0), 0);
    const counter = Number((await reader.get(`${dataPrefix}:count:${key}`)) ?? '0');
    const tokens = (await reader.lrange(`${dataPrefix}:tokens:${key}`, 0, -1)).map(Number);
    expect({ key, counter }).toEqual({ key, counter: expected });
    expect(tokens).toHaveLength(expected);
    const notIncreasing = tokens.findIndex((t, i) => i > 0 && !(t > tokens[i - 1]!));
    expect({ key, notIncreasing }).toEqual({ key, notIncreasing: -1 });
    perKey[key] = expected;
  }
  return perKey;
}
