/*
 * Fair lock across OS processes: waiters are granted in the order they queued, and a waiter that
 * is killed or frozen in the queue holds the others up only until its queue deadline.
 */
import type { WorkerProcess } from '../support/spawn-worker';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV, lockNames } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const FAIR = { fair: true };

async function startHolders(n: number, orderKey: string): Promise<WorkerProcess[]> {
  const workers = Array.from({ length: n }, () =>
    env.worker('holder-worker.ts', { env: { ORDER_KEY: orderKey } }),
  );
  await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
  return workers;
}

/** Sends an acquire to `worker` and waits until its waiter has a place in the Redis queue. */
async function enqueue(
  worker: WorkerProcess,
  id: string,
  key: string,
  place: number,
  holdMs?: number,
): Promise<void> {
  worker.send({ type: 'acquire', id, key, options: FAIR, holdMs });
  await waitUntil(async () => (await env.admin.zcard(lockNames(key, 'fair').aux)) === place, {
    timeoutMs: 30_000,
    description: `${id} to queue at place ${place}`,
  });
}

describe('fair lock across processes', () => {
  it('grants waiters of three processes in the order they queued, also within one process', async () => {
    const key = uniqueKey('fair-procs');
    const orderKey = `${key}:order`;
    const [a, b, c] = await startHolders(3, orderKey);
    const engine = env.engine();
    const holder = await engine.acquire(key, FAIR);
    const plan: [WorkerProcess, string][] = [
      [a!, 'a1'],
      [b!, 'b1'],
      [c!, 'c1'],
      [b!, 'b2'],
      [a!, 'a2'],
      [c!, 'c2'],
      [a!, 'a3'],
    ];
    for (const [i, [worker, id]] of plan.entries()) await enqueue(worker, id, key, i + 1, 10);
    await holder.release();
    await waitUntil(async () => (await env.admin.llen(orderKey)) === plan.length, {
      timeoutMs: 60_000,
      description: 'every waiter to be granted',
    });
    expect(await env.admin.lrange(orderKey, 0, -1)).toEqual(plan.map(([, id]) => id));
    for (const w of [a!, b!, c!]) {
      expect(w.messages.filter((m) => m.type === 'failed')).toEqual([]);
    }
  }, 180_000);

  it('drops a waiter killed with SIGKILL at its queue deadline, and the next waiter gets the lock', async () => {
    const key = uniqueKey('fair-killed');
    const orderKey = `${key}:order`;
    const [doomed, next] = await startHolders(2, orderKey);
    const engine = env.engine();
    const holder = await engine.acquire(key, FAIR);
    await enqueue(doomed!, 'doomed', key, 1);
    await enqueue(next!, 'next', key, 2);
    doomed!.kill('SIGKILL');
    await doomed!.exited;
    await holder.release();
    const granted = await next!.waitForMessage((m) => m.type === 'granted', 60_000);
    expect(granted.id).toBe('next');
    expect(await env.admin.lrange(orderKey, 0, -1)).toEqual(['next']);
    expect(await env.admin.zcard(lockNames(key, 'fair').aux)).toBe(0);
  }, 120_000);

  it('lets a frozen waiter lose its place, and queue again at the back once it thaws', async () => {
    const key = uniqueKey('fair-frozen');
    const orderKey = `${key}:order`;
    const [frozen, next] = await startHolders(2, orderKey);
    const engine = env.engine();
    const holder = await engine.acquire(key, FAIR);
    await enqueue(frozen!, 'frozen', key, 1, 10);
    await enqueue(next!, 'next', key, 2);
    frozen!.pause();
    await holder.release();
    await next!.waitForMessage((m) => m.type === 'granted', 60_000);
    frozen!.resume();
    await waitUntil(async () => (await env.admin.zcard(lockNames(key, 'fair').aux)) === 1, {
      timeoutMs: 30_000,
      description: 'the thawed waiter to queue again',
    });
    next!.send({ type: 'release', id: 'next' });
    await frozen!.waitForMessage((m) => m.type === 'granted', 60_000);
    expect(await env.admin.lrange(orderKey, 0, -1)).toEqual(['next', 'frozen']);
  }, 120_000);

  it('does not let a newcomer take the free lock while an earlier waiter is still queued', async () => {
    const key = uniqueKey('fair-no-barging');
    const orderKey = `${key}:order`;
    // A backoff cap of 60 s gives the queued waiter a 242 s deadline: frozen, it keeps its place.
    const head = env.worker('holder-worker.ts', {
      env: {
        ORDER_KEY: orderKey,
        ENGINE_OPTIONS: JSON.stringify({ backoff: { initialMs: 1, maxMs: 60_000 } }),
      },
    });
    await head.waitForMessage((m) => m.type === 'ready', 60_000);
    const engine = env.engine();
    const holder = await engine.acquire(key, FAIR);
    await enqueue(head, 'head', key, 1);
    head.pause();
    await holder.release();
    expect(await engine.tryAcquire(key, FAIR)).toBeNull(); // free, but not this newcomer's turn
    const newcomer = engine.acquire(key, { ...FAIR, waitMs: 60_000 });
    await waitUntil(async () => (await env.admin.zcard(lockNames(key, 'fair').aux)) === 2);
    head.resume();
    await head.waitForMessage((m) => m.type === 'granted', 60_000);
    head.send({ type: 'release', id: 'head' });
    const mine = await newcomer;
    expect(await env.admin.lrange(orderKey, 0, -1)).toEqual(['head']);
    expect(mine.isHeld).toBe(true);
    await mine.release();
  }, 120_000);
});
