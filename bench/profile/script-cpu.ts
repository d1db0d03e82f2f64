/*
 * Redis' own CPU per uncontended acquire + release, the scripts alone: mutex-acquire.lua then
 * mutex-release.lua on a free key, sent in pipelines of 100 pairs (so the client is never what Redis
 * waits for), against raw SET NX PX + a Lua compare-and-delete, and two bare rows that split the
 * scripts' price: "bare EVALSHA" (two scripts of the same KEYS and ARGV that return at once) and
 * "bare commands" (the six redis.call of the uncontended path, PTTL, TIME, SET … GET, SET, GET, DEL,
 * with no other logic). Interleaved trials, minimum and median; figures are INFO commandstats (usec
 * of the script calls, nested commands included) and INFO cpu (the whole Redis process).
 *   node -r ts-node/register/transpile-only bench/profile/script-cpu.ts [--before=DIR] [--trials=9] [--ops=10000]
 * DIR: another copy of lib/ whose core/scripts are measured beside this tree's (sent the arguments
 * this tree's engine sends, and the old release's four when --before-release-args=4).
 */
import Redis from 'ioredis';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startRedis } from '../../test/support/redis-server';

function flag(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

/** A script of `dir` with its `--!include` lines expanded, as defineScript does. */
function source(dir: string, file: string): string {
  return readFileSync(`${dir}/${file}`, 'utf8').replace(/^--!include (\S+)\s*$/gm, (_l, f: string) =>
    source(dir, f),
  );
}

type Pair = (i: number) => { acquire: (string | number)[]; release: (string | number)[] };

const K = 'lock:{bench:script-cpu}';
// Ids of the engine's lengths: an 8-character engine id and 27-character random ids.
const ids = (i: number): [string, string] => [
  `abcdefgh.${'o'.repeat(22)}${String(i).padStart(5, '0')}`,
  `${'h'.repeat(22)}${String(i).padStart(5, '0')}`,
];
/** The engine's KEYS and ARGV; the release's first `releaseArgs` ARGV (2: the short form, 4: all). */
const engineArgs =
  (releaseArgs: number): Pair =>
  (i) => {
    const [owner, hold] = ids(i);
    const release = [2, `${K}:m`, `${K}:m:aux`, owner, hold, `${K}:m:ch`, 'PUBLISH'];
    return {
      acquire: [3, `${K}:m`, `${K}:fence`, `${K}:m:aux`, owner, hold, 10_000, 86_400_000, 33, 'abcdefgh'],
      release: release.slice(0, 3 + releaseArgs),
    };
  };

const BARE_ACQUIRE = `return {1, 1}`;
const BARE_RELEASE = `return 1`;
const COMMANDS_ACQUIRE = `
local pttl = redis.call('PTTL', KEYS[1])
local t = redis.call('TIME')
local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('SET', KEYS[2], string.format('%.0f', token), 'PX', ARGV[4], 'GET')
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. string.format('%.0f', token), 'PX', ARGV[3])
return {1, token}`;
const COMMANDS_RELEASE = `
local value = redis.pcall('GET', KEYS[1])
if not value then return 0 end
redis.call('DEL', KEYS[1])
return 1`;
const RAW_RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

async function main(): Promise<void> {
  const trials = Number(flag('trials', '9'));
  const ops = Number(flag('ops', '10000'));
  const before = flag('before', '');
  const here = resolve(__dirname, '../../lib/core/scripts');
  const server = await startRedis();
  const redis = new Redis(server.url);
  const load = async (lua: string) => (await redis.script('LOAD', lua)) as string;
  const variants: { name: string; acquire: string; release: string; args: Pair }[] = [];
  const scripted = async (name: string, acquire: string, release: string, args: Pair) =>
    variants.push({ name, acquire: acquire && (await load(acquire)), release: await load(release), args });
  await scripted('raw SET NX PX + Lua', '', RAW_RELEASE, (i) => ({
    acquire: [],
    release: [1, K, ids(i)[0]],
  }));
  await scripted('bare EVALSHA (return at once)', BARE_ACQUIRE, BARE_RELEASE, engineArgs(2));
  await scripted('bare commands (no logic)', COMMANDS_ACQUIRE, COMMANDS_RELEASE, engineArgs(2));
  if (before && existsSync(`${before}/core/scripts`)) {
    const dir = `${before}/core/scripts`;
    const releaseArgs = Number(flag('before-release-args', '4'));
    await scripted(
      'before',
      source(dir, 'mutex-acquire.lua'),
      source(dir, 'mutex-release.lua'),
      engineArgs(releaseArgs),
    );
  }
  await scripted(
    'this tree',
    source(here, 'mutex-acquire.lua'),
    source(here, 'mutex-release.lua'),
    engineArgs(2),
  );
  // The script calls' usec include the commands they run (which commandstats also counts under
  // their own names): raw's top-level SET is added, a script's nested SET is not.
  const stat = async (raw: boolean) => {
    const commands = await redis.info('commandstats');
    const cpu = await redis.info('cpu');
    const usec = (c: string) =>
      Number(new RegExp(`cmdstat_${c}:calls=\\d+,usec=(\\d+)`).exec(commands)?.[1] ?? 0);
    const seconds = (f: string) => Number(new RegExp(`${f}:([\\d.]+)`).exec(cpu)![1]);
    return {
      executing: usec('evalsha') + (raw ? usec('set') : 0),
      cpu: (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6,
    };
  };
  const results = new Map(variants.map((v) => [v.name, { executing: [] as number[], cpu: [] as number[] }]));
  try {
    for (let t = 0; t < trials; t++) {
      for (const v of variants) {
        const s0 = await stat(v.acquire === '');
        for (let b = 0; b < ops; b += 100) {
          const p = redis.pipeline();
          for (let i = b; i < b + 100; i++) {
            const { acquire, release } = v.args(i);
            if (v.acquire === '') p.set(K, ids(i)[0], 'PX', 10_000, 'NX');
            else p.call('EVALSHA', v.acquire, ...acquire);
            p.call('EVALSHA', v.release, ...release);
          }
          const replies = (await p.exec()) ?? [];
          const failed = replies.find(([err]) => err);
          if (failed) throw failed[0];
          // Every pair must be a grant and its release (1): a busy key would measure another path.
          if (replies.some(([, reply], i) => i % 2 === 1 && reply !== 1))
            throw new Error(`${v.name}: not released`);
        }
        const s1 = await stat(v.acquire === '');
        const r = results.get(v.name)!;
        r.executing.push((s1.executing - s0.executing) / ops);
        r.cpu.push((s1.cpu - s0.cpu) / ops);
      }
    }
  } finally {
    await redis.quit();
    await server.stop();
  }
  const min = (xs: number[]) => Math.min(...xs).toFixed(1);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
  console.log(`${trials} interleaved trials of ${ops} acquire + release pairs, pipelined; µs per pair`);
  console.log('| variant | scripts executing, min | median | Redis CPU, min | median |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, r] of results) {
    console.log(
      `| ${name} | ${min(r.executing)} | ${median(r.executing)} | ${min(r.cpu)} | ${median(r.cpu)} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
