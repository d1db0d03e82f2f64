/*
 * Client CPU per uncontended acquire + release, this tree against another copy of lib/ and the raw
 * SET NX PX + Lua release baseline, in ONE process on one Redis: short trials of each variant in
 * turn, the minimum and median trial reported. On a loaded machine a trial's CPU time grows with the
 * neighbours' load (cache, frequency), never shrinks: the minimum of many interleaved trials is the
 * figure least disturbed by it, and interleaving gives every variant the same conditions.
 *   node -r ts-node/register/transpile-only bench/profile/paired-cpu.ts --before=DIR [--after=DIR] [--trials=15] [--ops=2000]
 * DIR: another copy of lib/ (e.g. `git archive <commit> lib | tar -x -C DIR`, then DIR/lib, with this
 * checkout's node_modules resolvable from it). --after replaces this tree's lib/: two commits side by
 * side, such as one change alone (the environment seam: 4b6be70^ against 4b6be70).
 * The row "same wire, no library" sends what the engine sends on this path (mutex-acquire and
 * mutex-release by EVALSHA, the same keys and arguments, ids of the same length) straight through
 * ioredis: the client's price of the protocol itself, apart from the engine's own logic.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import Redis from 'ioredis';
import { defineScript } from '../../lib/core/redis/script-library';
import { RedisTarget } from '../redis-target';

type Cycle = () => Promise<unknown>;

function flag(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

const RAW_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

async function engineCycles(
  dir: string,
  url: string,
  label: string,
): Promise<{ cycles: [string, Cycle][]; close: () => Promise<void> }> {
  const { createLockEngine } = (await import(`${dir}/core`)) as typeof import('../../lib/core');
  const engine = createLockEngine({ redis: url });
  const key = `bench:paired:${label}`;
  return {
    cycles: [
      [`${label}, leaseMs`, async () => (await engine.acquire(key, { leaseMs: 10_000 })).release()],
      [`${label}, watchdog`, async () => (await engine.acquire(key)).release()],
    ],
    close: () => engine.close(),
  };
}

function stats(xs: number[]): { min: number; median: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]! };
}

async function main(): Promise<void> {
  const trials = Number(flag('trials', '15'));
  const ops = Number(flag('ops', '2000'));
  const before = flag('before', '');
  const after = flag('after', '');
  const target = await RedisTarget.open();
  const redis = new Redis(target.url);
  redis.defineCommand('rawRelease', { numberOfKeys: 1, lua: RAW_RELEASE });
  const rel = redis as unknown as { rawRelease(k: string, t: string): Promise<number> };
  const raw: Cycle = async () => {
    const token = randomBytes(16).toString('hex');
    if ((await redis.set('bench:paired:raw', token, 'PX', 10_000, 'NX')) !== 'OK') throw new Error('busy');
    await rel.rawRelease('bench:paired:raw', token);
  };
  const acquire = defineScript('mutex-acquire');
  const release = defineScript('mutex-release');
  await redis.script('LOAD', acquire.source);
  await redis.script('LOAD', release.source);
  // The engine's ids: an 8-character engine id, 27-character random ids (20 bytes, base64url).
  const id = () => randomBytes(20).toString('base64url');
  const engineId = id().slice(0, 8);
  const k = 'lock:bench:paired:wire';
  const wire: Cycle = async () => {
    const owner = `${engineId}.${id()}`;
    const hold = id();
    await redis.evalsha(
      acquire.sha,
      3,
      `${k}:m`,
      `${k}:fence`,
      `${k}:m:aux`,
      owner,
      hold,
      10_000,
      86_400_000,
      33,
      engineId,
    );
    // The channel and PUBLISH are left out, as the engine does (mutex-release.lua names them).
    await redis.evalsha(release.sha, 2, `${k}:m`, `${k}:m:aux`, owner, hold);
  };
  const engines = [
    after
      ? await engineCycles(resolve(after), target.url, 'after')
      : await engineCycles(resolve(__dirname, '../../lib'), target.url, 'this tree'),
  ];
  if (before) engines.unshift(await engineCycles(resolve(before), target.url, 'before'));
  const variants: [string, Cycle][] = [
    ['raw SET NX PX + Lua', raw],
    ['same wire, no library', wire],
    ...engines.flatMap((e) => e.cycles),
  ];
  const cpu = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  const redisUs = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  // The Redis process' own CPU (INFO cpu): the scripts' execution plus reading and answering the calls.
  const redisCpu = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  try {
    for (const [, cycle] of variants) for (let i = 0; i < 2000; i++) await cycle(); // warm
    for (let t = 0; t < trials; t++) {
      for (const [name, cycle] of variants) {
        const snap = await target.snapshot();
        const c0 = process.cpuUsage();
        for (let i = 0; i < ops; i++) await cycle();
        const c = process.cpuUsage(c0);
        const delta = RedisTarget.delta(snap, await target.snapshot());
        cpu.get(name)!.push((c.user + c.system) / ops);
        // A script's usec include the commands it runs, which commandstats also counts under their own
        // names: only raw's SET is a top-level one.
        const counted = cycle === raw ? ['set', 'evalsha', 'eval'] : ['evalsha', 'eval'];
        const executing = counted.reduce((s, n) => s + (delta.commandMicros[n] ?? 0), 0);
        redisUs.get(name)!.push(executing / ops);
        redisCpu.get(name)!.push(delta.cpuMicros / ops);
      }
    }
    console.log(`${trials} interleaved trials of ${ops} operations each; µs per acquire + release`);
    console.log(
      '| variant | client CPU, min | client CPU, median | Redis executing, min | Redis executing, median | Redis CPU, min | Redis CPU, median |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const [name] of variants) {
      const a = stats(cpu.get(name)!);
      const r = stats(redisUs.get(name)!);
      const p = stats(redisCpu.get(name)!);
      console.log(
        `| ${name} | ${a.min.toFixed(1)} | ${a.median.toFixed(1)} | ${r.min.toFixed(1)} | ${r.median.toFixed(1)} | ${p.min.toFixed(1)} | ${p.median.toFixed(1)} |`,
      );
    }
  } finally {
    for (const e of engines) await e.close();
    await redis.quit();
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
