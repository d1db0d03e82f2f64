import Redis from 'ioredis';
import { startRedis, type RedisServerProcess } from '../../support/redis-server';
import { spawnWorker, workerPath, type WorkerProcess } from '../../support/spawn-worker';
import { sleep } from '../../support/wait';

/*
 * Three replicas as separate OS processes, each with ScheduleModule and its own
 * DistributedLockModule.forRoot({ redis }), one of them with its clock 50 ms ahead. Every
 * replica's @Cron('* * * * * *') fires for every second; with onBusy: 'skip' (and the default
 * scheduled minHoldMs of half the period) each tick must run exactly once across the replicas.
 */
const WORKER = workerPath('cron-replica-worker.ts');
const WINDOW_MS = 17_000;
const PREFIX = `cron-procs-${process.pid}:`;

let server: RedisServerProcess;
let client: Redis;
let workers: WorkerProcess[] = [];
/** The whole seconds every replica was up for (first and last excluded). */
let window: number[] = [];
const runs: Record<string, { second: number; replica: string }[]> = {};

beforeAll(async () => {
  server = await startRedis();
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  workers = ['a', 'b', 'c'].map((replica) =>
    spawnWorker(WORKER, {
      env: {
        REDIS_URL: server.url,
        REPLICA: replica,
        LIST_PREFIX: PREFIX,
        SKEW_MS: replica === 'c' ? '50' : '0',
      },
    }),
  );
  await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 30_000)));
  const first = Math.ceil(Date.now() / 1000) + 1;
  await sleep(WINDOW_MS);
  const last = Math.floor(Date.now() / 1000) - 1;
  window = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  // The long job may still be running: let it finish before reading.
  await sleep(1_700);
  for (const job of ['fast', 'medium', 'long']) {
    const entries = await client.lrange(`${PREFIX}${job}`, 0, -1);
    runs[job] = entries.map((entry) => {
      const [second, replica] = entry.split(' ');
      return { second: Number(second), replica };
    });
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(
    workers.map(async (w) => {
      if (!w.running) return;
      w.send({ type: 'stop' });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([w.exited, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
      clearTimeout(timer);
      await w.stop(1_000);
    }),
  );
  await client?.quit();
  await server?.stop();
}, 20_000);

const duplicates = (seconds: number[]): number[] =>
  seconds.filter((second, i) => seconds.indexOf(second) !== i);

describe('@Cron + @DistributedLock({ onBusy: "skip" }) in 3 replica processes, one clock +50 ms', () => {
  it('covers a window of at least 15 ticks', () => {
    expect(window.length).toBeGreaterThanOrEqual(15);
    for (const w of workers) expect(w.running).toBe(true);
  });

  it.each([
    ['fast', '1 ms'],
    ['medium', '20 ms'],
  ])('runs each tick of the %s job (%s) at most once, and at least 90%% of the ticks', (job) => {
    const seconds = runs[job].map((r) => r.second);
    expect(duplicates(seconds)).toEqual([]);
    const ran = window.filter((second) => seconds.includes(second));
    // Twice a CI run saw 10 of 15: a watchdog round renewed the lock after its min-hold release, so
    // it was held 30 s from about 10 s in (fixed; test/core/min-hold.spec.ts). A missing tick prints
    // the runs, to find out why.
    if (ran.length < window.length) {
      const missing = window.filter((second) => !seconds.includes(second));
      console.warn(
        `${job}: ${ran.length} of ${window.length} ticks ran; missing ${missing.join(', ')}; runs ${JSON.stringify(runs[job])}`,
      );
    }
    expect(ran.length).toBeGreaterThanOrEqual(Math.ceil(window.length * 0.9));
  });

  it('never runs a job longer than the period twice at once: overlapping ticks are skipped', () => {
    const seconds = runs.long.map((r) => r.second);
    expect(duplicates(seconds)).toEqual([]);
    // A 1.5 s job started at tick T still holds the lock at T + 1: the next run is T + 2 or later.
    const sorted = [...seconds].sort((x, y) => x - y);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i] - sorted[i - 1]).toBeGreaterThanOrEqual(2);
    const ran = window.filter((second) => seconds.includes(second));
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.length).toBeLessThan(window.length);
  });
});
