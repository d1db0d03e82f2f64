/*
 * Several permits of a counting semaphore in one call, on a real Redis: all or none, never more
 * than `limit` in use, given back together, and a large request is not starved by a stream of
 * small ones (its reservation stops new small grants from taking the permits it waits for).
 */
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { spawnWorker, workerPath, type WorkerProcess } from '../support/spawn-worker';

const PREFIX = 'sp:';
const space = new KeySpace(PREFIX);
const LIMIT = 5;
const WORKER = workerPath('counter-worker.ts');
const env = useLockEnv();
let engines: LockEngine[];

beforeEach(() => {
  engines = [0, 1, 2].map(() => env.engine({ keyPrefix: PREFIX }));
});

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('takes several permits all or none and gives them back together', async () => {
  const key = uniqueKey('sem');
  const [a, b] = engines as [LockEngine, LockEngine];
  const three = await a.acquire(key, { limit: LIMIT, permits: 3, waitMs: 0 });
  expect(await b.tryAcquire(key, { limit: LIMIT, permits: 3 })).toBeNull();
  const two = await b.acquire(key, { limit: LIMIT, permits: 2, waitMs: 0 });
  expect(await b.tryAcquire(key, { limit: LIMIT })).toBeNull();
  await three.release();
  const again = await b.acquire(key, { limit: LIMIT, permits: 3, waitMs: 0 });
  await Promise.all([two.release(), again.release()]);
  // Every permit is back and nothing is left in Redis.
  const all = await a.acquire(key, { limit: LIMIT, permits: LIMIT, waitMs: 0 });
  await all.release();
  expect(await env.admin.exists(space.names(key, 'sem').lock, space.names(key, 'sem').aux)).toBe(0);
});

it('never has more than limit permits in use when holders ask for 1 to 5 permits', async () => {
  const key = uniqueKey('sem');
  let inUse = 0;
  let peak = 0;
  let sections = 0;
  const caller = async (engine: LockEngine, seed: number): Promise<void> => {
    for (let i = 0; i < 60; i++) {
      const permits = 1 + ((seed + i * 7) % LIMIT);
      await engine.using(key, { limit: LIMIT, permits, waitMs: 60_000 }, async () => {
        inUse += permits;
        peak = Math.max(peak, inUse);
        await tick();
        await env.admin.ping();
        inUse -= permits;
        sections++;
      });
    }
  };
  await Promise.all(engines.flatMap((e, i) => [caller(e, i), caller(e, i + 3), caller(e, i + 5)]));
  expect(sections).toBe(9 * 60);
  expect(peak).toBeLessThanOrEqual(LIMIT);
  expect(peak).toBeGreaterThan(1); // the workload did overlap
});

it('lets a 5-permit caller in within a bounded number of grants while 1-permit callers keep coming', async () => {
  const key = uniqueKey('sem');
  const fence = space.names(key, 'sem').fence;
  let stop = false;
  const smallTokens: number[] = [];
  // Eight 1-permit callers that overlap, so without the reservation 5 permits are never free at once.
  const small = async (engine: LockEngine): Promise<void> => {
    while (!stop) {
      await engine.using(key, { limit: LIMIT, waitMs: 60_000 }, async (lock) => {
        smallTokens.push(lock.fencingToken);
        await env.admin.ping();
        await tick();
      });
    }
  };
  const stream = engines.flatMap((e) => [small(e), small(e), small(e)]);
  while (smallTokens.length < 200) await env.admin.ping(); // the stream is running
  const before = Number(await env.admin.get(fence));
  const big = await engines[0]!.acquire(key, { limit: LIMIT, permits: LIMIT, waitMs: 60_000 });
  const bigToken = big.fencingToken;
  await big.release();
  stop = true;
  await Promise.all(stream);
  // Small grants after the big request was first refused: none once it holds the reservation;
  // a few may have been granted between reading the counter and its first attempt.
  const overtaking = smallTokens.filter((t) => t > before && t < bigToken).length;
  expect(overtaking).toBeLessThanOrEqual(2 * LIMIT);
  expect(smallTokens.filter((t) => t > bigToken).length).toBeGreaterThan(0); // the stream went on after
});

it('refuses bad permits before any command', async () => {
  const [a] = engines as [LockEngine];
  const key = uniqueKey('sem');
  await expect(a.acquire(key, { permits: 2 })).rejects.toThrow(/permits needs limit/);
  await expect(a.acquire(key, { limit: 3, permits: 4 })).rejects.toThrow(RangeError);
  await expect(a.acquire(key, { limit: 3, permits: 0 })).rejects.toThrow(/from 1 to limit \(3\)/);
  await expect(a.acquire(key, { limit: 3, permits: 1.5 })).rejects.toThrow(RangeError);
  await expect(a.acquire(key, { limit: 3, permits: '2' as unknown as number })).rejects.toThrow(TypeError);
});

it('never has more than limit permits in use across OS processes asking for 1 to 5 permits', async () => {
  const key = uniqueKey('sem');
  const inUse = `${key}:in-use`; // where counter-worker.ts counts the permits in use (DATA_PREFIX = key)
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      workers.push(
        spawnWorker(WORKER, {
          env: {
            REDIS_URL: env.url,
            KEY_PREFIX: PREFIX,
            MODE: 'permits',
            KEYS: key,
            DATA_PREFIX: key,
            WAIT_MS: '120000',
            LIMIT: String(LIMIT),
            CALLERS: '4',
            ITERATIONS: '60',
          },
        }),
      );
    }
    await Promise.all(
      workers.map((w) => w.waitForMessage((m) => m.type === 'ready' || m.type === 'error', 90_000)),
    );
    for (const w of workers) w.send({ type: 'go' });
    const done = await Promise.all(
      workers.map((w) => w.waitForMessage((m) => m.type === 'done' || m.type === 'error', 120_000)),
    );
    for (const d of done) expect(d).toMatchObject({ type: 'done', sections: 4 * 60 });
    const peak = Math.max(...done.map((d) => (d as { peak: number }).peak));
    expect(peak).toBeLessThanOrEqual(LIMIT);
    expect(peak).toBeGreaterThan(1);
    expect(await env.admin.get(inUse)).toBe('0');
  } finally {
    await Promise.all(workers.filter((w) => w.running).map((w) => w.stop()));
  }
}, 180_000);
