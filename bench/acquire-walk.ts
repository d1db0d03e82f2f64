/*
 * `npm run walk`: which source files one uncontended acquire() + release() runs code in, from the Nest
 * service down to the Redis client and back (docs/ARCHITECTURE.md quotes the list). Warms the path up,
 * then counts function calls with V8's precise coverage over exactly one call, in several windows.
 */
import 'reflect-metadata';
import * as inspector from 'node:inspector/promises';
import * as path from 'node:path';
import { Test } from '@nestjs/testing';
import { DistributedLockModule, DistributedLockService } from '../lib';
import { startRedis } from '../test/support/redis-server';

/** Windows measured; the one with the fewest files is reported. */
const WINDOWS = 5;

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
  // Several windows of one call each, the one with the fewest files kept: a background timer (the
  // registry's 250 ms sync, a connection's keep-alive) can fire inside any one window, and it is not
  // part of the call.
  const root = path.resolve(__dirname, '..');
  let files = new Map<string, number>();
  for (let window = 0; window < WINDOWS; window++) {
    await session.post('Profiler.takePreciseCoverage'); // resets the counters
    await once();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const seen = new Map<string, number>();
    for (const script of result) {
      if (!script.url.startsWith('file://')) continue;
      const file = path.relative(root, new URL(script.url).pathname);
      const calls = script.functions.reduce((n, f) => n + (f.ranges[0]?.count ?? 0), 0);
      if (calls > 0 && !file.startsWith('..')) seen.set(file, calls);
    }
    const ownFiles = (m: Map<string, number>) => [...m.keys()].filter((f) => f.startsWith('lib/')).length;
    if (window === 0 || ownFiles(seen) < ownFiles(files)) files = seen;
  }
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();

  const ours = [...files].filter(([f]) => f.startsWith('lib/')).sort(([a], [b]) => a.localeCompare(b));
  const dirs = new Map<string, number>();
  for (const [f] of ours) dirs.set(path.dirname(f), (dirs.get(path.dirname(f)) ?? 0) + 1);
  console.log(
    `one uncontended acquire + release (leaseMs 10 s) through the Nest service: ${ours.length} files under lib/ (fewest of ${WINDOWS} windows)`,
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
