/*
 * Where the time of one seckill request goes: the sample app's `POST /seckill/:itemId` (HTTP, Nest, the
 * interceptor, the engine, Redis) against the same route behind an in-process mutex (the ceiling), each
 * in its own process under `--cpu-prof`, driven by autocannon as `npm run bench` drives them. Prints per
 * app: req/s, the app process' CPU per request by category (busy samples of its CPU profile), and Redis'
 * commands and CPU per request.
 *   node -r ts-node/register/transpile-only bench/profile/seckill-profile.ts [--requests=4000] [--connections=200]
 *     [--rounds=1] [--apps=0,2] [--attribute[=TOP]]
 * --rounds repeats the apps in turn (ABAB...), --apps picks RUNS by index, --before=DIR runs each app
 * but the ceiling from DIR as well (a copy of the tree before a change), --attribute also prints the
 * Node-internal, GC and builtin time charged to its nearest ancestor in lib/, Nest, ioredis... (attribution.ts).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import {
  areaOf,
  attribute,
  printAttribution,
  printComparison,
  perRequest as attributedPerRequest,
  attributeAllocations,
  type Attribution,
  type CpuProfile,
  type HeapNode,
} from './attribution';
import { RedisTarget } from '../redis-target';
import { ITEM_ID, type HttpAppId } from '../http/seckill-bench-config';
import { mainThreadSchedUs, processCpuUs, startSeckillApp } from './seckill-app';

/** The apps, and the ceiling once more with an AsyncLocalStorage in use (what async context tracking costs). */
const RUNS: { app: HttpAppId; asyncContext?: boolean; tree?: string }[] = [
  { app: 'nestjs-distributed-lock' },
  { app: 'nestjs-distributed-lock (bare module)' },
  { app: 'in-process mutex (ceiling)' },
  { app: 'in-process mutex (ceiling)', asyncContext: true },
];

function flag(name: string, fallback: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
}

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}

/** What part of the stack a profile node's code belongs to. */
function categoryOf(node: ProfileNode): string | undefined {
  const { functionName: fn, url } = node.callFrame;
  if (['(idle)', '(program)'].includes(fn)) return undefined;
  if (fn === '(garbage collector)') return 'GC';
  if (url.includes('/lib/') && !url.includes('node_modules'))
    return 'this library (engine, interceptor, decorator)';
  if (url.includes('/sample-app/') || url.includes('/bench/http/'))
    return 'the app (route, service, its own Redis calls)';
  if (url.includes('ioredis')) return 'ioredis';
  if (url.includes('@nestjs')) return 'Nest (router, pipes, interceptor chain)';
  if (/express|fastify|find-my-way|light-my-request|avvio|body-parser|router/.test(url))
    return 'HTTP framework';
  if (['writeUtf8String', 'writev', 'writeBuffer', 'writeLatin1String'].includes(fn))
    return 'socket writes (syscalls)';
  return 'Node internals (HTTP parser, streams, timers)';
}

/**
 * The busy samples taken in [fromUs, toUs] (CLOCK_MONOTONIC µs, the clock V8's profile timestamps and
 * process.hrtime share on Linux), by category, in µs of CPU.
 */
function categorize(file: string, fromUs: number, toUs: number): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: (ProfileNode & { id: number })[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byCategory = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    if (at < fromUs || at > toUs) continue;
    const category = categoryOf(byId.get(profile.samples[i]!)!);
    // A sample stands for the time until the next one.
    const spanUs = profile.timeDeltas[i + 1] ?? 0;
    if (category) byCategory.set(category, (byCategory.get(category) ?? 0) + spanUs);
  }
  return byCategory;
}

async function profileApp(
  { app, asyncContext = false, tree }: (typeof RUNS)[number],
  target: RedisTarget,
  requests: number,
  connections: number,
): Promise<Measured> {
  const label = `${asyncContext ? `${app} + an AsyncLocalStorage in use` : app}${tree ? ' (before)' : ''}`;
  const dir = resolve('.results/prof/seckill', label.replace(/\W+/g, '-'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { child, port } = await startSeckillApp(app, target, requests, {
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    env: { BENCH_ASYNC_CONTEXT: asyncContext ? '1' : '0' },
    tree,
  });
  const exited = new Promise((done) => child.once('exit', done));
  const alloc = process.argv.includes('--alloc');
  const said = (what: string) =>
    new Promise<void>((done) => {
      const on = (d: Buffer) => {
        if (!d.includes(what)) return;
        child.stdout.off('data', on);
        done();
      };
      child.stdout.on('data', on);
    });
  if (alloc) {
    const started = said('alloc-started');
    child.stdin.write('alloc-start\n');
    await started;
  }
  const before = await target.snapshot();
  const cpuBefore = processCpuUs(child.pid!);
  const schedBefore = mainThreadSchedUs(child.pid!);
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/seckill/${ITEM_ID}`,
    method: 'POST',
    connections,
    amount: requests,
    timeout: 120,
    sampleInt: 10,
  });
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const cpuUs = processCpuUs(child.pid!) - cpuBefore;
  const schedAfter = mainThreadSchedUs(child.pid!);
  const mainOnCpuUs = schedAfter.onCpu - schedBefore.onCpu;
  const mainWaitingUs = schedAfter.waiting - schedBefore.waiting;
  const redis = RedisTarget.delta(before, await target.snapshot());
  const allocFile = join(dir, 'allocations.heapprofile');
  if (alloc) {
    const saved = said('alloc-saved');
    child.stdin.write(`alloc-stop ${allocFile}\n`);
    await saved;
  }
  child.stdin.write('exit\n');
  await exited;
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
  const byCategory = categorize(join(dir, file), fromUs, toUs);
  const total = result.requests.total;
  const attributeTop = process.argv.find((a) => a.startsWith('--attribute'));
  const perRequest = [...byCategory]
    .sort((a, b) => b[1] - a[1])
    .map(([category, us]) => [category, us / total] as const);
  const busyUs = perRequest.reduce((sum, [, us]) => sum + us, 0);
  console.log(
    `\n${label}: ${Math.round(total / result.duration)} req/s (${total} requests, ${connections} connections), ` +
      `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; Redis ${(redis.totalCommands / total).toFixed(2)} ` +
      `commands and ${(redis.cpuMicros / total).toFixed(1)} µs CPU per request`,
  );
  console.log(
    `  app process CPU per request: ${(cpuUs / total).toFixed(1)} µs (/proc, 10 ms ticks; ` +
      `main thread ${(mainOnCpuUs / total).toFixed(1)} µs on a CPU, ${(mainWaitingUs / total).toFixed(1)} µs ` +
      `runnable waiting for one); ` +
      `busy profile samples in the run: ${busyUs.toFixed(1)} µs, of which:`,
  );
  for (const [category, us] of perRequest) console.log(`    ${us.toFixed(1).padStart(7)} µs  ${category}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const attribution = attribute(profile, fromUs, toUs);
  if (attributeTop) printAttribution(attribution, total, Number(attributeTop.split('=')[1] ?? 25));
  let allocations: Attribution | undefined;
  if (alloc) {
    allocations = attributeAllocations(
      (JSON.parse(readFileSync(allocFile, 'utf8')) as { head: HeapNode }).head,
    );
    console.log(
      `  allocated ${(allocations.busyUs / total).toFixed(0)} B/request (sampled), by nearest owned frame:`,
    );
    for (const [k, bytes] of [...allocations.byAncestor].sort((x, y) => y[1] - x[1]).slice(0, 15))
      console.log(`  ${(bytes / total).toFixed(0).padStart(7)} B  ${k}`);
  }
  return {
    label,
    reqPerSec: total / result.duration,
    cpuUsPerReq: cpuUs / total,
    mainOnCpuUsPerReq: mainOnCpuUs / total,
    mainWaitingUsPerReq: mainWaitingUs / total,
    attribution,
    allocations,
    requests: total,
  };
}

interface Measured {
  label: string;
  reqPerSec: number;
  cpuUsPerReq: number;
  mainOnCpuUsPerReq: number;
  mainWaitingUsPerReq: number;
  attribution: Attribution;
  allocations?: Attribution;
  requests: number;
}

/** Every run's req/s and CPU per request; with --attribute, the first app against the last one, averaged over rounds. */
function summarize(all: Measured[]): void {
  const labels = [...new Set(all.map((m) => m.label))];
  console.log(
    '\n| app | req/s per round | app CPU µs/req per round (/proc) | main thread on a CPU, µs/req | main thread waiting for a CPU, µs/req |\n|---|---|---|---|---|',
  );
  for (const label of labels) {
    const runs = all.filter((m) => m.label === label);
    const list = (f: (m: Measured) => number) => runs.map((m) => Math.round(f(m))).join(', ');
    console.log(
      `| ${label} | ${list((m) => m.reqPerSec)} | ${list((m) => m.cpuUsPerReq)} | ` +
        `${list((m) => m.mainOnCpuUsPerReq)} | ${list((m) => m.mainWaitingUsPerReq)} |`,
    );
  }
  if (!process.argv.some((a) => a.startsWith('--attribute')) || labels.length < 2) return;
  // The first app against the last (the ceiling); with three, also the first against the second
  // (--before: the tree before a change against after it) and the second against the last.
  const pairs: (readonly [string, string])[] = [[labels[0]!, labels[labels.length - 1]!]];
  if (labels.length === 3) pairs.push([labels[0]!, labels[1]!], [labels[1]!, labels[2]!]);
  const runsOf = (label: string, alloc: boolean) =>
    all
      .filter((m) => m.label === label)
      .map(({ attribution, allocations, requests }) => ({ a: alloc ? allocations! : attribution, requests }));
  for (const alloc of all[0]!.allocations ? [false, true] : [false]) {
    for (const pair of pairs) {
      for (const keyOf of [areaOf, (ancestor: string) => ancestor]) {
        console.log(alloc ? '\nBytes allocated per request (sampled), by nearest owned frame:' : '');
        printComparison(
          pair,
          [
            attributedPerRequest(runsOf(pair[0], alloc), keyOf),
            attributedPerRequest(runsOf(pair[1], alloc), keyOf),
          ],
          30,
          alloc ? 'bytes/request' : 'µs/request',
        );
      }
    }
  }
}

async function main(): Promise<void> {
  const requests = flag('requests', 4000);
  const connections = flag('connections', 200);
  const target = await RedisTarget.open();
  try {
    const apps = process.argv.find((a) => a.startsWith('--apps='));
    let runs = apps
      ? apps
          .slice(7)
          .split(',')
          .map((i) => RUNS[Number(i)]!)
      : RUNS;
    // --before=DIR: each app also runs from DIR (a copy of the tree before a change), just before itself.
    const before = process.argv.find((a) => a.startsWith('--before='))?.slice('--before='.length);
    if (before)
      runs = runs.flatMap((r) =>
        r.app === 'in-process mutex (ceiling)' ? [r] : [{ ...r, tree: before }, r],
      );
    const all: Measured[] = [];
    for (let round = 0; round < flag('rounds', 1); round++)
      for (const run of runs) all.push(await profileApp(run, target, requests, connections));
    summarize(all);
  } finally {
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
