/*
 * `npm run walk`: which source files one uncontended acquire() + release() runs code in, from the Nest
 * service down to the Redis client and back (docs/ARCHITECTURE.md quotes the list). Warms the path up,
 * then counts function calls with V8's precise coverage over exactly one call.
 */
import 'reflect-metadata';
import * as inspector from 'node:inspector/promises';
import * as path from 'node:path';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, DistributedLockService } from '../lib';
import { startRedis } from '../test/support/redis-server';

async function main(): Promise<void> {
  const server = await startRedis();
  const moduleRef = await Test.createTestingModule({
    imports: [DistributedLockModule.forRoot({ redis: server.url, keyPrefix: 'walk:' })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const locks = app.get(DistributedLockService);
  const once = async () => {
    const lock = await locks.acquire('walk', { leaseMs: 10_000 });
    await lock.release();
  };
  for (let i = 0; i < 200; i++) await once(); // warm: scripts loaded, connection ready

  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // resets the counters
  await once();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();

  const root = path.resolve(__dirname, '..');
  const files = new Map<string, number>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = path.relative(root, new URL(script.url).pathname);
    const calls = script.functions.reduce((n, f) => n + (f.ranges[0]?.count ?? 0), 0);
    if (calls > 0 && !file.startsWith('..')) files.set(file, calls);
  }
  const ours = [...files].filter(([f]) => f.startsWith('lib/')).sort(([a], [b]) => a.localeCompare(b));
  const dirs = new Map<string, number>();
  for (const [f] of ours) dirs.set(path.dirname(f), (dirs.get(path.dirname(f)) ?? 0) + 1);
  console.log(
    `one uncontended acquire + release (leaseMs 10 s) through the Nest service: ${ours.length} files under lib/`,
  );
  for (const [d, n] of dirs) console.log(`  ${d}: ${n}`);
  for (const [f, calls] of ours) console.log(`    ${f} (${calls} calls)`);
  await app.close();
  await server.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
