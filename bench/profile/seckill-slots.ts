/*
 * Where a serialized request's time goes: the seckill route's purchases of one item run one at a time
 * (under this library's lock, or the ceiling's in-process mutex), so req/s is one over the time from
 * one purchase's start to the next one's. That time splits into the critical section itself (GET, the
 * 1 ms pause, SET, INCR: start → end of SeckillService.purchase) and the gap to the next purchase's
 * start (the hand-off: the route's code after the purchase, the release, and the next request's code
 * up to its purchase). Each app runs in its own process (bench/http/serve.ts, BENCH_SLOT_TIMES=1),
 * started once and warmed up; rounds alternate the apps (the order reversed every other round), each
 * run `--requests` POSTs on 200 connections with stock enough for all. Prints per run: req/s, the
 * app's CPU per request (/proc, all threads), the section's and the gap's mean and p50 (µs).
 *   node -r ts-node/register/transpile-only bench/profile/seckill-slots.ts [--requests=4000] [--rounds=4]
 *     [--apps=N,M]  indexes into HTTP_APPS (default: the bare module and the ceiling)
 */
import autocannon from 'autocannon';
import { RedisTarget } from '../redis-target';
import {
  benchSampleConfig,
  HTTP_APPS,
  HTTP_CEILING,
  HTTP_OURS_BARE,
  ITEM_ID,
  type HttpAppId,
} from '../http/seckill-bench-config';
import { median } from '../stats';
import { processCpuUs, startSeckillApp, type SeckillApp } from './seckill-app';

function flag(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

interface Summary {
  mean: number;
  p50: number;
  p90: number;
}
interface Slots {
  type: 'slots';
  count: number;
  section: Summary;
  gap: Summary;
}

/** Asks the app for its purchases' timings since the last ask (and starts them over). */
function readSlots(app: SeckillApp): Promise<Slots> {
  return new Promise((resolve) => {
    let partial = '';
    const onData = (chunk: Buffer): void => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('"slots"')) continue;
        app.child.stdout.off('data', onData);
        resolve(JSON.parse(line) as Slots);
      }
    };
    app.child.stdout.on('data', onData);
    app.child.stdin.write('slots\n');
  });
}

const us = (ms: number): string => String(Math.round(ms * 1000));

async function main(): Promise<void> {
  const requests = Number(flag('requests', '4000'));
  const rounds = Number(flag('rounds', '4'));
  const ids: HttpAppId[] = flag('apps', '')
    ? flag('apps', '')
        .split(',')
        .map((i) => HTTP_APPS[Number(i)]!)
    : [HTTP_OURS_BARE, HTTP_CEILING];
  const target = await RedisTarget.open();
  const apps: (SeckillApp & { id: HttpAppId })[] = [];
  try {
    for (const id of ids) {
      apps.push({
        id,
        ...(await startSeckillApp(id, target, requests, { nodeArgs: [], env: { BENCH_SLOT_TIMES: '1' } })),
      });
    }
    // startSeckillApp cleans the target before each app: every app's stock is set once all are up.
    const stockFor = async (app: SeckillApp): Promise<void> => {
      const prefix = benchSampleConfig(target.url, app.port).keyPrefix;
      await target.admin.mset(
        `${prefix}seckill:${ITEM_ID}:stock`,
        String(requests),
        `${prefix}seckill:${ITEM_ID}:sold`,
        '0',
      );
    };
    const ratios = new Map<HttpAppId, number[]>();
    for (let round = 0; round < rounds; round++) {
      const rps = new Map<HttpAppId, number>();
      for (const app of round % 2 === 0 ? apps : [...apps].reverse()) {
        await stockFor(app);
        await readSlots(app); // the warm-up's and earlier runs' purchases are not this run's
        const cpu0 = processCpuUs(app.child.pid!);
        const result = await autocannon({
          url: `http://127.0.0.1:${app.port}/seckill/${ITEM_ID}`,
          method: 'POST',
          connections: 200,
          amount: requests,
          timeout: 120,
          sampleInt: 10,
        });
        const cpu = processCpuUs(app.child.pid!) - cpu0;
        const slots = await readSlots(app);
        const perSecond = result.requests.total / result.duration;
        rps.set(app.id, perSecond);
        console.log(
          `round ${round + 1} ${app.id}: ${Math.round(perSecond)} req/s, CPU ${Math.round(cpu / result.requests.total)} µs/req; ` +
            `section mean ${us(slots.section.mean)} p50 ${us(slots.section.p50)} µs, ` +
            `gap mean ${us(slots.gap.mean)} p50 ${us(slots.gap.p50)} p90 ${us(slots.gap.p90)} µs (${slots.count} purchases)`,
        );
      }
      const ceiling = rps.get(HTTP_CEILING);
      if (ceiling)
        for (const [id, r] of rps)
          if (id !== HTTP_CEILING) ratios.set(id, [...(ratios.get(id) ?? []), r / ceiling]);
    }
    for (const [id, r] of ratios)
      console.log(
        `${id} / ceiling: median ${median(r).toFixed(3)} (${r.map((x) => x.toFixed(3)).join(', ')})`,
      );
  } finally {
    for (const app of apps) {
      app.child.stdin.write('exit\n');
      await new Promise((exited) => app.child.once('exit', exited));
    }
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
