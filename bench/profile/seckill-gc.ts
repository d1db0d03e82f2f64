/*
 * The seckill route without a profiler: each app in its own process under --trace-gc, driven as
 * seckill-profile.ts drives it (autocannon, 200 connections on item1, 200 warm-up requests on another
 * item), in turn, round after round. Prints per run: req/s, the app's CPU per request (/proc, all
 * threads; and its main thread, schedstat), and the scavenges and mark-compacts of the measured
 * window with their main-thread pauses per request. autocannon's `amount` runs end on whole seconds:
 * ask for enough requests (12,000: ±4 %) before reading req/s.
 *   node -r ts-node/register/transpile-only bench/profile/seckill-gc.ts [--requests=12000] [--rounds=2] [--before=DIR]
 * --before=DIR runs the sample app from DIR too (a copy of the tree before a change), just before it.
 */
import autocannon from 'autocannon';
import { RedisTarget } from '../redis-target';
import { ITEM_ID, type HttpAppId } from '../http/seckill-bench-config';
import { mainThreadSchedUs, processCpuUs, startSeckillApp } from './seckill-app';

function flag(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

async function run(app: HttpAppId, target: RedisTarget, requests: number, tree?: string): Promise<void> {
  const { child, port } = await startSeckillApp(app, target, requests, { nodeArgs: ['--trace-gc'], tree });
  let trace = '';
  let recording = false;
  child.stdout.on('data', (d: Buffer) => {
    if (recording) trace += d.toString();
  });
  const pid = child.pid!;
  const cpuUs = () => processCpuUs(pid);
  const mainUs = () => mainThreadSchedUs(pid).onCpu;
  recording = true;
  const [cpu0, main0, t0] = [cpuUs(), mainUs(), performance.now()];
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/seckill/${ITEM_ID}`,
    method: 'POST',
    connections: 200,
    amount: requests,
    timeout: 120,
  });
  const [cpu, main, seconds] = [cpuUs() - cpu0, mainUs() - main0, (performance.now() - t0) / 1000];
  recording = false;
  const total = result.requests.total;
  const lines = trace.split('\n');
  // A --trace-gc line: "... Scavenge 80.1 (95.3) -> 70.2 (96.0) MB, 4.12 / 0.00 ms ..." (pause / external).
  const pauses = (kind: string) =>
    lines.filter((l) => l.includes(kind)).map((l) => Number(/MB, ([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0));
  const sum = (a: number[]) => a.reduce((s, v) => s + v, 0);
  const [scavenges, markCompacts] = [pauses('Scavenge'), pauses('Mark-Compact')];
  const perReq = (us: number) => Math.round(us / total);
  console.log(
    `${app}${tree ? ' (before)' : ''}: ${Math.round(total / seconds)} req/s, CPU ${perReq(cpu)} µs/req ` +
      `(main thread ${perReq(main)}); scavenges ${scavenges.length} (${perReq(sum(scavenges) * 1000)} µs/req ` +
      `main-thread pause), mark-compacts ${markCompacts.length} (${perReq(sum(markCompacts) * 1000)} µs/req)`,
  );
  child.stdin.write('exit\n');
  await new Promise((exited) => child.once('exit', exited));
}

async function main(): Promise<void> {
  const requests = Number(flag('requests', '12000'));
  const before = flag('before', '');
  const target = await RedisTarget.open();
  try {
    for (let round = 0; round < Number(flag('rounds', '2')); round++) {
      if (before) await run('nestjs-distributed-lock', target, requests, before);
      await run('nestjs-distributed-lock', target, requests);
      await run('in-process mutex (ceiling)', target, requests);
    }
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
