/*
 * Fair cohorts (`cohort: { fair: true }`) across OS processes: each process holds one place in the
 * Redis queue, processes are granted in the order their entries arrived, the waiters of one process
 * in their local order (handed over inside the process), and a killed process holds the others up
 * only until its entry's deadline.
 */
import type { WorkerProcess } from '../support/spawn-worker';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV, lockNames } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const FAIR = { fair: true };

async function startHolders(n: number, orderKey: string): Promise<WorkerProcess[]> {
  const workers = Array.from({ length: n }, () =>
    env.worker('holder-worker.ts', {
      env: {
        ORDER_KEY: orderKey,
        // Fair cohorts, with a time budget no busy machine runs out of.
        ENGINE_OPTIONS: JSON.stringify({ cohort: { passes: 32, budgetMs: 60_000, fair: true } }),
      },
    }),
  );
  await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
  return workers;
}

const queue = (key: string): Promise<string[]> => env.admin.zrange(lockNames(key, 'fair').aux, '0', '-1');

/** Sends an acquire to `worker` and waits until the Redis queue has `places` entries. */
async function enqueue(worker: WorkerProcess, id: string, key: string, places: number): Promise<void> {
  worker.send({ type: 'acquire', id, key, options: FAIR, holdMs: 10 });
  await waitUntil(async () => (await queue(key)).length === places, {
    timeoutMs: 30_000,
    description: `${id}'s process to queue at place ${places}`,
  });
}

/** Sends an acquire to `worker` and waits until it has joined the worker's local queue. */
async function enqueueLocally(worker: WorkerProcess, id: string, key: string): Promise<void> {
  worker.send({ type: 'acquire', id, key, options: FAIR, holdMs: 10 });
  worker.send({ type: 'ping', id });
  await worker.waitForMessage((m) => m.type === 'pong' && m.id === id, 30_000);
}

describe('fair cohorts across processes', () => {
  it('grants three processes in the order their entries arrived, each process its waiters in local order', async () => {
    const key = uniqueKey('fair-cohort-procs');
    const orderKey = `${key}:order`;
    const [a, b, c] = await startHolders(3, orderKey);
    const holder = await env.engine().acquire(key, FAIR);
    await enqueue(a!, 'a1', key, 1);
    await enqueue(b!, 'b1', key, 2);
    await enqueue(c!, 'c1', key, 3);
    for (const [worker, id] of [
      [b!, 'b2'],
      [a!, 'a2'],
      [c!, 'c2'],
      [a!, 'a3'],
    ] as const) {
      await enqueueLocally(worker, id, key);
    }
    // Seven waiters, three places: one per process.
    expect(await queue(key)).toHaveLength(3);
    await holder.release();
    await waitUntil(async () => (await env.admin.llen(orderKey)) === 7, {
      timeoutMs: 60_000,
      description: 'every waiter to be granted',
    });
    expect(await env.admin.lrange(orderKey, 0, -1)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'c2']);
    for (const w of [a!, b!, c!]) {
      expect(w.messages.filter((m) => m.type === 'failed')).toEqual([]);
    }
    expect(await queue(key)).toEqual([]);
  }, 180_000);

  it("drops a killed process' entry at its deadline, and the next process gets the lock", async () => {
    const key = uniqueKey('fair-cohort-killed');
    const orderKey = `${key}:order`;
    const [doomed, next] = await startHolders(2, orderKey);
    const holder = await env.engine().acquire(key, FAIR);
    await enqueue(doomed!, 'doomed-1', key, 1);
    await enqueueLocally(doomed!, 'doomed-2', key);
    await enqueue(next!, 'next', key, 2);
    doomed!.kill('SIGKILL');
    await doomed!.exited;
    await holder.release();
    const granted = await next!.waitForMessage((m) => m.type === 'granted', 60_000);
    expect(granted.id).toBe('next');
    expect(await env.admin.lrange(orderKey, 0, -1)).toEqual(['next']);
    expect(await queue(key)).toEqual([]);
  }, 120_000);
});
