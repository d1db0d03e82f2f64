/*
 * Counting semaphore across OS processes: never more than `limit` holders at once under contention
 * (a Redis-side counter records the most seen), and the permit of a killed holder comes back.
 */
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV, lockNames } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const PROCESSES = 3;
const LOOPS = 4;
const ITERATIONS = 30;
const LIMIT = 3;

describe('counting semaphore across processes', () => {
  it(`never has more than ${LIMIT} holders at once with ${PROCESSES * LOOPS} contenders in ${PROCESSES} processes`, async () => {
    const key = uniqueKey('sem-procs');
    const [cur, max] = [`${key}:current`, `${key}:max`];
    const workers = Array.from({ length: PROCESSES }, () =>
      env.worker('contention-worker.ts', {
        env: {
          KEY: key,
          MODE: 'sem',
          LOOPS: String(LOOPS),
          ITERATIONS: String(ITERATIONS),
          HOLD_MS: '3',
          LIMIT: String(LIMIT),
          CUR_KEY: cur,
          MAX_KEY: max,
        },
      }),
    );
    await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
    for (const w of workers) w.send({ type: 'go' });
    const done = await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'done', 240_000)));
    expect(done.map((d) => d.failures)).toEqual(workers.map(() => 0));
    expect(done.reduce((n, d) => n + d.sections, 0)).toBe(PROCESSES * LOOPS * ITERATIONS);
    expect(Number(await env.admin.get(max))).toBeLessThanOrEqual(LIMIT);
    expect(Number(await env.admin.get(max))).toBe(LIMIT); // the permits were used, not serialised
    expect(Number(await env.admin.get(cur))).toBe(0);
    const names = lockNames(key, 'sem');
    expect(await env.admin.exists(names.lock, names.aux)).toBe(0);
  }, 300_000);

  it('gives the permit of a holder killed with SIGKILL back after its lease', async () => {
    const key = uniqueKey('sem-killed');
    const holder = env.worker('holder-worker.ts', {
      env: {
        ORDER_KEY: `${key}:order`,
        ENGINE_OPTIONS: JSON.stringify({ watchdogLeaseMs: 1500, renewEveryMs: 500 }),
      },
    });
    await holder.waitForMessage((m) => m.type === 'ready', 60_000);
    holder.send({ type: 'acquire', id: 'doomed', key, options: { limit: 1 } });
    await holder.waitForMessage((m) => m.type === 'granted', 30_000);
    const engine = env.engine();
    expect(await engine.tryAcquire(key, { limit: 1 })).toBeNull();
    holder.kill('SIGKILL');
    await holder.exited;
    const permit = await engine.acquire(key, { limit: 1, waitMs: 30_000 });
    expect(permit.isHeld).toBe(true);
    expect(await env.admin.zcard(lockNames(key, 'sem').aux)).toBe(1);
    await permit.release();
  }, 120_000);
});
