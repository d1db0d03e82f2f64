/*
 * Probe: client CPU and heap allocation per uncontended acquire + release, this engine vs raw SET NX.
 * node -r ts-node/register/transpile-only bench/solo-probe.ts [ops] [callers]
 */
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createLockEngine } from '../lib/core';
import { startRedis } from '../test/support/redis-server';

const OPS = Number(process.argv[2] ?? 20000);
const CALLERS = Number(process.argv[3] ?? 1);
const MODE = process.argv[4] ?? 'fixed';

async function measure(name: string, once: (k: string) => Promise<void>): Promise<void> {
  const loop = async (n: number) => {
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, c) => {
        for (let i = 0; i < n / CALLERS; i++) await once(`probe:${c}`);
      }),
    );
  };
  await loop(Math.min(5000, OPS)); // warm
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { PerformanceObserver } = await import('node:perf_hooks');
  let gcMs = 0;
  const obs = new PerformanceObserver((l) => l.getEntries().forEach((e) => (gcMs += e.duration)));
  obs.observe({ entryTypes: ['gc'] });
  await loop(OPS);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  obs.disconnect();
  const heap1 = process.memoryUsage().heapUsed;
  console.log(
    `${name.padEnd(28)} ${Math.round((OPS / wall) * 1000)} ops/s  cpu ${((cpu.user + cpu.system) / OPS).toFixed(1)} µs/op  gc ${((gcMs / wall) * 100).toFixed(1)}%  heapΔ ${(heap1 - heap0) / 1e6} MB`,
  );
}

async function main(): Promise<void> {
  const server = await startRedis();
  const engine = createLockEngine({ redis: server.url, keyPrefix: 'p:' });
  const opts = MODE === 'fixed' ? { leaseMs: 10_000 } : {};
  const redis = new Redis(server.url);
  redis.defineCommand('rel', {
    numberOfKeys: 1,
    lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
  });
  const rel = redis as unknown as { rel(k: string, t: string): Promise<number> };
  for (let r = 0; r < 2; r++) {
    await measure(`engine ${MODE} x${CALLERS}`, async (k) => {
      const h = await engine.acquire(k, opts);
      await h.release();
    });
    await measure(`raw x${CALLERS}`, async (k) => {
      const t = randomBytes(16).toString('hex');
      if ((await redis.set(k, t, 'PX', 10000, 'NX')) !== 'OK') throw new Error('busy');
      await rel.rel(k, t);
    });
  }
  await engine.close();
  await redis.quit();
  await server.stop();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
