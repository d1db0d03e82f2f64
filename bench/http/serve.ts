import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createInterface } from 'node:readline';
import { listenTuned } from '../../sample-app/http-tuning';
import { startSampleApp } from '../../sample-app/main';
import { SeckillService } from '../../sample-app/seckill/seckill.service';
import {
  benchSampleConfig,
  HTTP_APPS,
  HTTP_LEASE_MS,
  HTTP_OURS_BARE,
  HTTP_OURS_LEASE,
  type HttpAppId,
} from './seckill-bench-config';

/*
 * One seckill app in its own process (env BENCH_HTTP_APP, BENCH_REDIS_URL, BENCH_PORT): our
 * library is the sample app itself; the peers are the same route and service with their
 * decorator; the ceiling is the same route and service behind an in-process mutex. Prints {"type":"listening"}; closes the app on an "exit" line or SIGTERM. BENCH_SLOT_TIMES=1 times every purchase (reportSlots).
 */

async function start(id: HttpAppId, redisUrl: string, port: number): Promise<INestApplication> {
  const config = benchSampleConfig(redisUrl, port);
  if (id === 'nestjs-distributed-lock')
    return startSampleApp(config, { host: '127.0.0.1', logger: ['error'] });
  if (id === HTTP_OURS_LEASE)
    return startSampleApp(
      { ...config, lockLeaseMs: HTTP_LEASE_MS },
      { host: '127.0.0.1', logger: ['error'] },
    );
  const module =
    id === HTTP_OURS_BARE
      ? (await import('./bare-seckill.module')).BareSeckillModule.forRoot(config)
      : id === 'in-process mutex (ceiling)'
        ? (await import('./in-process-mutex-seckill.module')).InProcessMutexSeckillModule.forRoot(config)
        : id === '@anchan828/nest-redlock'
          ? (await import('./anchan828-seckill.module')).Anchan828SeckillModule.forRoot(config)
          : (await import('./redlock-universal-seckill.module')).RedlockUniversalSeckillModule.forRoot(
              config,
            );
  const app = await NestFactory.create(module, { logger: ['error'], forceCloseConnections: true });
  await listenTuned(app, port, '127.0.0.1');
  return app;
}

async function main(): Promise<void> {
  // BENCH_ASYNC_CONTEXT=1 (bench/profile/seckill-profile.ts): an AsyncLocalStorage in use in the
  // process, as this library's lock scope has one, to measure what async context tracking costs an app.
  if (process.env.BENCH_ASYNC_CONTEXT === '1') new AsyncLocalStorage<boolean>().enterWith(true);
  const id = process.env.BENCH_HTTP_APP as HttpAppId;
  if (!HTTP_APPS.includes(id)) throw new Error(`unknown BENCH_HTTP_APP ${JSON.stringify(id)}`);
  if (process.env.BENCH_SLOT_TIMES === '1') timeSlots();
  const app = await start(id, process.env.BENCH_REDIS_URL!, Number(process.env.BENCH_PORT));
  process.stdout.write(`${JSON.stringify({ type: 'listening' })}\n`);
  const stop = async () => {
    await Promise.race([app.close(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.includes('exit')) break;
    if (line.startsWith('alloc-')) await allocationSampling(line);
    if (line === 'slots') reportSlots();
  }
  await stop();
}

/**
 * bench/profile/seckill-profile.ts --alloc: `alloc-start` starts V8's sampling heap profiler (collected
 * objects included, so it counts what is allocated, not what survives); `alloc-stop FILE` writes the
 * profile to FILE and prints {"type":"alloc-saved"}.
 */
let heapSession: import('node:inspector/promises').Session | undefined;
async function allocationSampling(line: string): Promise<void> {
  if (line === 'alloc-start') {
    const inspector = await import('node:inspector/promises');
    heapSession = new inspector.Session();
    heapSession.connect();
    await heapSession.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as import('node:inspector').HeapProfiler.StartSamplingParameterType);
    process.stdout.write(`${JSON.stringify({ type: 'alloc-started' })}\n`);
  } else if (line.startsWith('alloc-stop ') && heapSession) {
    const { profile } = await heapSession.post('HeapProfiler.stopSampling');
    heapSession.disconnect();
    heapSession = undefined;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(line.slice('alloc-stop '.length), JSON.stringify(profile));
    process.stdout.write(`${JSON.stringify({ type: 'alloc-saved' })}\n`);
  }
}

/**
 * bench/profile/seckill-slots.ts: every purchase's start and end on the monotonic clock. The route
 * serializes purchases of one item (a lock, or the ceiling's mutex), so a run splits into critical
 * sections (start → end) and the gaps between one's end and the next one's start (the hand-off, from
 * the route's own code to the next request's). A `slots` line prints {"type":"slots", ...} for the
 * purchases since the last one and starts over.
 */
const slots = { starts: [] as number[], ends: [] as number[] };
let slotsTimed = false;
function timeSlots(): void {
  if (slotsTimed) return;
  slotsTimed = true;
  const proto = SeckillService.prototype;
  const purchase = proto.purchase;
  proto.purchase = async function timedPurchase(this: SeckillService, itemId: string) {
    slots.starts.push(performance.now());
    try {
      return await purchase.call(this, itemId);
    } finally {
      slots.ends.push(performance.now());
    }
  };
}

function reportSlots(): void {
  const { starts, ends } = slots;
  const sections: number[] = [];
  const gaps: number[] = [];
  // Purchases run one at a time, so the i-th end belongs to the i-th start.
  for (let i = 0; i < Math.min(starts.length, ends.length); i++) {
    sections.push(ends[i]! - starts[i]!);
    if (i > 0) gaps.push(starts[i]! - ends[i - 1]!);
  }
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
    const mean = sorted.reduce((sum, v) => sum + v, 0) / (sorted.length || NaN);
    return { mean, p50: at(0.5), p90: at(0.9) };
  };
  process.stdout.write(
    `${JSON.stringify({ type: 'slots', count: sections.length, section: summary(sections), gap: summary(gaps) })}\n`,
  );
  slots.starts = [];
  slots.ends = [];
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
