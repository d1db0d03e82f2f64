/*
 * Read-write lock across OS processes: readers overlap and writers exclude everything (checked on
 * a Redis-side timeline), and a reader that dies or freezes frees its share after its own lease.
 */
import { replayIntervals } from '../support/interval-log';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV, lockNames } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const PROCESSES = 3;
const LOOPS = 4;
const ITERATIONS = 30;

describe('read-write lock across processes', () => {
  it('the timeline checker flags a writer that overlaps a reader (control)', () => {
    const report = replayIntervals(['+r:5:a', '+w:6:b', '-r:5:a', '-w:6:b', '+r:4:c', '-r:4:c']);
    expect(report.overlaps).toEqual(['w:6:b']);
    expect(report.tokenRegressions).toEqual(['r:4:c']);
  });

  it('lets readers of several processes overlap while every writer is alone', async () => {
    const key = uniqueKey('rw-procs');
    const logKey = `${key}:log`;
    const workers = Array.from({ length: PROCESSES }, () =>
      env.worker('contention-worker.ts', {
        env: {
          KEY: key,
          MODE: 'rw',
          LOOPS: String(LOOPS),
          ITERATIONS: String(ITERATIONS),
          HOLD_MS: '3',
          LOG_KEY: logKey,
          WRITE_EVERY: '4',
        },
      }),
    );
    // ts-node start-up is slow on a busy machine: everybody starts together.
    await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
    for (const w of workers) w.send({ type: 'go' });
    const done = await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'done', 240_000)));
    expect(done.map((d) => d.failures)).toEqual(workers.map(() => 0));

    const report = replayIntervals(await env.admin.lrange(logKey, 0, -1));
    expect(report.overlaps).toEqual([]);
    expect(report.unbalanced).toEqual([]);
    expect(report.tokenRegressions).toEqual([]);
    expect(report.reads + report.writes).toBe(PROCESSES * LOOPS * ITERATIONS);
    expect(report.writes).toBe(PROCESSES * LOOPS * (ITERATIONS / 4));
    expect(report.maxConcurrentReaders).toBeGreaterThanOrEqual(2);
    const names = lockNames(key, 'rw');
    expect(await env.admin.exists(names.lock, names.aux)).toBe(0);
  }, 300_000);

  it('frees the share of a reader killed with SIGKILL after its lease, so a writer gets in', async () => {
    const key = uniqueKey('rw-killed-reader');
    const names = lockNames(key, 'rw');
    const reader = env.worker('holder-worker.ts', {
      env: {
        ORDER_KEY: `${key}:order`,
        ENGINE_OPTIONS: JSON.stringify({ watchdogLeaseMs: 1500, renewEveryMs: 500 }),
      },
    });
    await reader.waitForMessage((m) => m.type === 'ready', 60_000);
    reader.send({ type: 'acquire', id: 'reader', key, options: { mode: 'read' } });
    await reader.waitForMessage((m) => m.type === 'granted', 30_000);
    const engine = env.engine();
    expect(await engine.tryAcquire(key, { mode: 'write' })).toBeNull();
    reader.kill('SIGKILL');
    await reader.exited;
    const writer = await engine.acquire(key, { mode: 'write', waitMs: 30_000 });
    expect(writer.isHeld).toBe(true);
    expect(await env.admin.zcard(names.aux)).toBe(1); // the writer alone; the dead reader was pruned
    await writer.release();
  }, 120_000);

  it('lets a frozen reader expire alone while another reader keeps renewing, and tells it when it wakes', async () => {
    const key = uniqueKey('rw-frozen-reader');
    const names = lockNames(key, 'rw');
    const frozen = env.worker('holder-worker.ts', {
      env: {
        ORDER_KEY: `${key}:order`,
        ENGINE_OPTIONS: JSON.stringify({ watchdogLeaseMs: 1500, renewEveryMs: 500 }),
      },
    });
    await frozen.waitForMessage((m) => m.type === 'ready', 60_000);
    frozen.send({ type: 'acquire', id: 'frozen', key, options: { mode: 'read' } });
    await frozen.waitForMessage((m) => m.type === 'granted', 30_000);
    const engine = env.engine({ watchdogLeaseMs: 1500, renewEveryMs: 500 });
    const live = await engine.acquire(key, { mode: 'read' });
    frozen.pause();
    // The live reader's renewals never extend the frozen one's lease: it is pruned on access.
    await waitUntil(
      async () => {
        const probe = await engine.tryAcquire(key, { mode: 'read' });
        await probe?.release();
        return (await env.admin.zcard(names.aux)) === 1;
      },
      { timeoutMs: 30_000, intervalMs: 100, description: 'the frozen reader to expire' },
    );
    expect(live.isHeld).toBe(true);
    await live.release();
    const writer = await engine.acquire(key, { mode: 'write', waitMs: 30_000 });
    frozen.resume();
    const lost = await frozen.waitForMessage((m) => m.type === 'lost', 30_000);
    expect(['expired', 'deleted']).toContain(lost.reason);
    expect(writer.isHeld).toBe(true);
    await writer.release();
  }, 120_000);
});
