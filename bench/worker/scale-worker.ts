import Redis from 'ioredis';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLockEngine, type LockHandle } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { parseInfo } from '../redis-target';
import { round, sleep } from '../stats';
import { commandsSent, exclude, installCommandCounter } from './command-counter';

/*
 * Scale of this library in one process (env BENCH_REDIS_URL, BENCH_SCALE as JSON):
 * 1. N distinct locks held at once: client heap, active timers, Redis memory, and what the
 *    watchdog costs (renewal commands per second) with a short watchdogLeaseMs;
 * 2. W waiters on K keys held by another engine: subscriptions on the server (PUBSUB), client
 *    memory and timers, idle polling, and the drain once the holders let go.
 * Prints one JSON line per measurement.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface ScaleJob {
  heldSteps: number[];
  watchdogLeaseMs: number;
  waiters: number;
  waiterKeys: number;
}

const url = process.env.BENCH_REDIS_URL!;
const job = JSON.parse(process.env.BENCH_SCALE!) as ScaleJob;
const admin = exclude(new Redis(url));
const emit = (m: object) => process.stdout.write(`${JSON.stringify(m)}\n`);

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function timers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

async function serverCounters(): Promise<{ commands: number; cpu: number; memory: number }> {
  const stats = await admin.info('commandstats');
  let commands = 0;
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (m[1] !== 'info') commands += Number(m[2]);
  const cpu = parseInfo(await admin.info('cpu'));
  const memory = parseInfo(await admin.info('memory'));
  return {
    commands,
    cpu: Number(cpu.used_cpu_sys) + Number(cpu.used_cpu_user),
    memory: Number(memory.used_memory),
  };
}

/** Runs `fn` over 0..n-1 with at most `width` in flight. */
async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function clean(): Promise<void> {
  let cursor = '0';
  do {
    const [nextCursor, keys] = await admin.scan(cursor, 'MATCH', '*bench:*', 'COUNT', 5000);
    cursor = nextCursor;
    if (keys.length) await admin.unlink(...keys);
  } while (cursor !== '0');
}

async function heldStep(n: number): Promise<void> {
  await clean();
  const engine = createLockEngine({ redis: url, watchdogLeaseMs: job.watchdogLeaseMs });
  const renewEveryMs = Math.round(job.watchdogLeaseMs / 3);
  await (await engine.acquire('bench:scale:warmup')).release();
  const heap0 = heapMb();
  const timers0 = timers();
  const server0 = await serverCounters();
  const handles: LockHandle[] = new Array(n);
  const t0 = performance.now();
  await pool(n, 256, async (i) => {
    // Distinct keys: nothing waits. waitMs only bounds each command (waitMs + 400 ms): 0 gave 401 ms,
    // which a watchdog round over 50,000+ held locks on a loaded 2-core machine can exceed.
    handles[i] = await engine.acquire(`bench:scale:${i}`, { waitMs: 5_000 });
  });
  const acquireMs = performance.now() - t0;
  const heap1 = heapMb();
  const timers1 = timers();
  const server1 = await serverCounters();
  // Renewal cost: every command in a window of two watchdog periods is a renewal (nothing else runs).
  const windowMs = 2 * renewEveryMs;
  const c0 = commandsSent();
  const s0 = await serverCounters();
  await sleep(windowMs);
  const c1 = commandsSent();
  const s1 = await serverCounters();
  const stats = engine.stats();
  const released = await Promise.all(handles.map((h) => h.release()));
  await engine.close();
  emit({
    type: 'held',
    locks: n,
    acquirePerSec: round(n / (acquireMs / 1000)),
    heapMb: round(heap1 - heap0),
    heapBytesPerLock: round(((heap1 - heap0) * 2 ** 20) / n),
    activeTimers: timers1,
    timersAdded: timers1 - timers0,
    redisBytesPerLock: round((server1.memory - server0.memory) / n),
    renewEveryMs,
    renewalClientCmdsPerSec: round((c1 - c0) / (windowMs / 1000)),
    renewalServerCmdsPerSec: round((s1.commands - s0.commands) / (windowMs / 1000)),
    renewalCpuUsPerSec: round(((s1.cpu - s0.cpu) * 1e6) / (windowMs / 1000)),
    watchdogEntries: stats.watchdog,
    allReleased: released.every(Boolean),
  });
}

async function waiterStep(): Promise<void> {
  await clean();
  const { waiters, waiterKeys } = job;
  const holder = createLockEngine({ redis: url });
  const waiting = createLockEngine({ redis: url });
  const keys = Array.from({ length: waiterKeys }, (_, i) => `bench:wait:${i}`);
  const space = new KeySpace('lock:');
  const channels = keys.map((k) => space.names(k).channel);
  const held = await Promise.all(keys.map((k) => holder.acquire(k)));
  await (await waiting.acquire('bench:wait:warmup')).release();
  const heap0 = heapMb();
  const timers0 = timers();
  let granted = 0;
  let failed = 0;
  const started = Array.from({ length: waiters }, (_, i) =>
    waiting.acquire(keys[i % waiterKeys]!, { waitMs: 600_000 }).then(
      async (h) => {
        granted++;
        await h.release();
      },
      () => {
        failed++;
      },
    ),
  );
  for (let i = 0; i < 500 && waiting.stats().channels < waiterKeys; i++) await sleep(20);
  await sleep(300); // let every head reach its steady backoff
  const heap1 = heapMb();
  const timers1 = timers();
  const numsub = (await admin.pubsub('NUMSUB', ...channels)) as (string | number)[];
  const subs = numsub.filter((_, i) => i % 2 === 1).map(Number);
  const serverChannels = ((await admin.pubsub('CHANNELS', '*bench:wait*')) as string[]).length;
  const c0 = commandsSent();
  const s0 = await serverCounters();
  await sleep(2000);
  const idleClientCmdsPerSec = (commandsSent() - c0) / 2;
  const s1 = await serverCounters();
  const t0 = performance.now();
  await Promise.all(held.map((h) => h.release()));
  await Promise.all(started);
  const drainMs = performance.now() - t0;
  await sleep(200);
  const channelsAfter = ((await admin.pubsub('CHANNELS', '*bench:wait*')) as string[]).length;
  const statsAfter = waiting.stats();
  await Promise.all([holder.close(), waiting.close()]);
  emit({
    type: 'waiters',
    waiters,
    keys: waiterKeys,
    serverChannels,
    subscribersPerChannel: { min: Math.min(...subs), max: Math.max(...subs) },
    localChannels: waiting.stats().channels,
    heapMb: round(heap1 - heap0),
    heapBytesPerWaiter: round(((heap1 - heap0) * 2 ** 20) / waiters),
    activeTimers: timers1,
    timersAdded: timers1 - timers0,
    idleClientCmdsPerSec: round(idleClientCmdsPerSec),
    idleServerCmdsPerSec: round((s1.commands - s0.commands) / 2),
    drainMs: round(drainMs),
    drainAcqPerSec: round(waiters / (drainMs / 1000)),
    granted,
    failed,
    channelsAfter,
    waitingLocksAfter: statsAfter.waitingLocks,
  });
}

async function main(): Promise<void> {
  installCommandCounter();
  for (const n of job.heldSteps) await heldStep(n);
  await waiterStep();
  await clean();
  await admin.quit();
  emit({ type: 'end' });
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
