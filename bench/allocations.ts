/*
 * `npm run bench:alloc`: heap bytes allocated per uncontended acquire + release, this engine (fixed
 * lease and watchdog) beside the raw SET NX PX + Lua release baseline, in one process on one Redis.
 * V8's sampling heap profiler counts every sampled allocation, collected ones included, over a fixed
 * number of operations after a warm-up; the figure is bytes sampled / operations (a sample every
 * 256 bytes on average, so it is an estimate, repeatable to a few per cent). Top allocation sites are
 * printed with `--sites` (`--sites=N`: the top N). `--lib=DIR`: another copy of lib/ (e.g. `git archive
 * <commit> lib` unpacked) for a before/after.
 */
import Redis from 'ioredis';
import * as inspector from 'node:inspector/promises';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { startRedis } from '../test/support/redis-server';

const OPS = 10_000;
const sitesFlag = process.argv.find((a) => a === '--sites' || a.startsWith('--sites='));
/** `--sites[=N]`: print the top N allocation sites (12 by default). */
const SHOW_SITES = sitesFlag === undefined ? 0 : Number(sitesFlag.split('=')[1] ?? 12);

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: ProfileNode[];
}

async function allocationsPerOp(
  session: inspector.Session,
  name: string,
  once: () => Promise<void>,
): Promise<void> {
  for (let i = 0; i < 3_000; i++) await once(); // warm: scripts loaded, code optimised
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as inspector.HeapProfiler.StartSamplingParameterType);
  for (let i = 0; i < OPS; i++) await once();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const sites = new Map<string, number>();
  let total = 0;
  let library = 0;
  const walk = (node: ProfileNode) => {
    total += node.selfSize;
    const { url, functionName, lineNumber } = node.callFrame;
    if (url.includes('/lib/')) library += node.selfSize;
    const site = `${url.replace(/^.*\/(lib|node_modules)\//, '$1/')}:${functionName}:${lineNumber + 1}`;
    sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    node.children?.forEach(walk);
  };
  walk(profile.head as ProfileNode);
  console.log(
    `${name.padEnd(34)} ${Math.round(total / OPS)} B/op (this library's code: ${Math.round(library / OPS)} B/op)`,
  );
  if (SHOW_SITES) {
    for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, SHOW_SITES)) {
      console.log(`    ${String(Math.round(bytes / OPS)).padStart(6)} B/op  ${site}`);
    }
  }
}

async function main(): Promise<void> {
  const libDir = process.argv.find((a) => a.startsWith('--lib='))?.slice('--lib='.length);
  const { createLockEngine } = (await import(
    libDir ? `${resolve(libDir)}/core` : '../lib/core'
  )) as typeof import('../lib/core');
  const server = await startRedis();
  const engine = createLockEngine({ redis: server.url, keyPrefix: 'bench:alloc:' });
  const redis = new Redis(server.url);
  const release = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
  const session = new inspector.Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  try {
    await allocationsPerOp(session, 'this engine, fixed lease (10 s)', async () => {
      const lock = await engine.acquire('fixed', { leaseMs: 10_000 });
      await lock.release();
    });
    await allocationsPerOp(session, 'this engine, watchdog', async () => {
      const lock = await engine.acquire('watchdog');
      await lock.release();
    });
    await allocationsPerOp(session, 'raw SET NX PX + Lua release', async () => {
      const token = randomBytes(16).toString('hex');
      if ((await redis.set('bench:alloc:raw', token, 'PX', 10_000, 'NX')) !== 'OK') throw new Error('busy');
      await redis.eval(release, 1, 'bench:alloc:raw', token);
    });
  } finally {
    session.disconnect();
    await engine.close();
    await redis.quit();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
