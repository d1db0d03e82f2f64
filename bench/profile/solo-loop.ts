/*
 * Where the time of one uncontended acquire + release goes: a solo loop (one caller, one key) against
 * a Redis of its own. Prints per operation: this process' CPU (user + system), the INFO commandstats
 * delta, Redis' CPU, and the time Redis spent executing the commands the client sent (a script's time
 * includes the commands it runs inside). Run it under `--cpu-prof` for
 * the client's CPU profile (docs/BENCHMARKS.md, "Where the time goes"):
 *   node --cpu-prof --cpu-prof-dir=.results/prof -r ts-node/register/transpile-only \
 *     bench/profile/solo-loop.ts --via=engine|service|raw [--ops=20000] [--lease=10000] [--callers=1] [--lib=DIR]
 *   node -r ts-node/register/transpile-only bench/profile/top-functions.ts .results/prof/<file>.cpuprofile
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import Redis from 'ioredis';
import { RedisTarget } from '../redis-target';

type Cycle = (key: string) => Promise<unknown>;

function flag(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const RAW_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

async function openCycle(
  via: string,
  url: string,
  leaseMs?: number,
): Promise<[Cycle, () => Promise<unknown>]> {
  const options = leaseMs === undefined ? undefined : { leaseMs };
  if (via === 'raw') {
    const redis = new Redis(url);
    redis.defineCommand('rawRelease', { numberOfKeys: 1, lua: RAW_RELEASE });
    const rel = redis as unknown as { rawRelease(k: string, t: string): Promise<number> };
    return [
      async (key) => {
        const token = randomBytes(16).toString('hex');
        if ((await redis.set(key, token, 'PX', leaseMs ?? 10_000, 'NX')) !== 'OK') throw new Error('busy');
        await rel.rawRelease(key, token);
      },
      () => redis.quit(),
    ];
  }
  if (via === 'engine') {
    // --lib=DIR: another copy of lib/ (e.g. `git archive <commit> lib` unpacked) for a before/after.
    const libDir = flag('lib', '');
    const { createLockEngine } = (await import(
      libDir ? `${resolve(libDir)}/core` : '../../lib/core'
    )) as typeof import('../../lib/core');
    const engine = createLockEngine({ redis: url });
    return [async (key) => (await engine.acquire(key, options)).release(), () => engine.close()];
  }
  const { NestFactory } = await import('@nestjs/core');
  const { Module } = await import('@nestjs/common');
  const { DistributedLockModule, DistributedLockService } = await import('../../lib');
  @Module({ imports: [DistributedLockModule.forRoot({ redis: url })] })
  class SoloModule {}
  const app = await NestFactory.createApplicationContext(SoloModule, { logger: false });
  const service = app.get(DistributedLockService);
  return [async (key) => (await service.acquire(key, options)).release(), () => app.close()];
}

async function main(): Promise<void> {
  const via = flag('via', 'engine');
  const ops = Number(flag('ops', '20000'));
  const lease = flag('lease', '');
  const callers = Number(flag('callers', '1'));
  const target = await RedisTarget.open();
  const [cycle, close] = await openCycle(via, target.url, lease ? Number(lease) : undefined);
  try {
    for (let i = 0; i < 2000; i++) await cycle('bench:solo:warmup');
    const before = await target.snapshot();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let left = ops;
    const loop = async (i: number) => {
      while (left-- > 0) await cycle(`bench:solo:${i}`);
    };
    await Promise.all(Array.from({ length: callers }, (_, i) => loop(i)));
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const delta = RedisTarget.delta(before, await target.snapshot());
    const perOp = Object.entries(delta.commands)
      .sort((a, b) => b[1] - a[1])
      .map(([name, calls]) => `${name} ${(calls / ops).toFixed(2)}`)
      .join(', ');
    // The commands the client sent (a script's time includes the commands it runs inside).
    const sent = via === 'raw' ? ['set', 'eval', 'evalsha'] : ['evalsha', 'eval'];
    const executing = sent.reduce((sum, name) => sum + (delta.commandMicros[name] ?? 0), 0);
    console.log(
      `${via}${lease ? ` leaseMs ${lease}` : ''}, ${callers} caller(s): ${Math.round(ops / (elapsed / 1000))} ops/s, ` +
        `${((cpu.user + cpu.system) / ops).toFixed(1)} µs client CPU/op, ` +
        `${(delta.totalCommands / ops).toFixed(2)} cmds/op (${perOp}), ${(delta.cpuMicros / ops).toFixed(1)} µs Redis CPU/op ` +
        `(${(executing / ops).toFixed(1)} µs executing ${sent.filter((n) => delta.commands[n]).join(' + ')})`,
    );
  } finally {
    await close();
    await target.clean();
    await target.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
