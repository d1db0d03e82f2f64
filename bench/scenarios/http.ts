import autocannon from 'autocannon';
import { getFreePort } from '../../test/support/free-port';
import { spawnWorker } from '../../test/support/spawn-worker';
import type { BenchProfile } from '../config';
import { benchSampleConfig, HTTP_APPS, ITEM_ID, type HttpAppId } from '../http/seckill-bench-config';
import type { RedisTarget } from '../redis-target';
import { round } from '../stats';

/** One app under autocannon, at one initial stock. */
export interface HttpFigures {
  app: HttpAppId;
  /** Initial stock (units on sale); = requests: no request finds it sold out. Absent in older runs (= requests). */
  stock?: number;
  connections: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  ok: number;
  /** Every non-2xx answer, the 409s included. */
  non2xx: number;
  /** 409 Sold Out answers (expected once the stock is gone). Absent in older runs. */
  soldOut?: number;
  errors: number;
  sold: number;
  stockLeft: number;
  /** Units sold beyond what left the stock (lost decrements): must be 0 under a lock. */
  oversold: number;
  note?: string;
}

/**
 * Drives `POST /seckill/item1` of each app in turn (its own process, the same Redis) with
 * autocannon, once per initial stock of the profile (`stockShares` × requests): stock = requests,
 * every request buys one unit; a smaller stock sells out part-way and the rest get 409.
 */
export async function runHttp(
  target: RedisTarget,
  profile: BenchProfile,
  log: (l: string) => void,
): Promise<HttpFigures[]> {
  const out: HttpFigures[] = [];
  for (const share of profile.http.stockShares) {
    const stock = Math.round(profile.http.requests * share);
    log(`  stock ${stock} for ${profile.http.requests} requests`);
    for (const app of HTTP_APPS) {
      try {
        out.push(await runOne(app, stock, target, profile));
        const f = out[out.length - 1]!;
        log(
          `    ${app}: ${f.rps} req/s, p99 ${f.p99Ms} ms, sold ${f.sold}, 409 ${f.soldOut}, ` +
            `other non2xx ${f.non2xx - (f.soldOut ?? 0)}, errors ${f.errors}, oversold ${f.oversold}`,
        );
      } catch (err) {
        const note = err instanceof Error ? err.message.split('\n')[0]! : String(err);
        log(`    ${app}: not measured: ${note}`);
        out.push(notMeasured(app, stock, note));
      }
    }
  }
  return out;
}

function notMeasured(app: HttpAppId, stock: number, note: string): HttpFigures {
  return {
    app,
    stock,
    connections: 0,
    requests: 0,
    rps: NaN,
    p50Ms: NaN,
    p99Ms: NaN,
    maxMs: NaN,
    ok: 0,
    non2xx: 0,
    errors: 0,
    sold: 0,
    stockLeft: 0,
    oversold: 0,
    note,
  };
}

async function runOne(
  app: HttpAppId,
  initialStock: number,
  target: RedisTarget,
  profile: BenchProfile,
): Promise<HttpFigures> {
  const { connections, requests } = profile.http;
  await target.clean();
  const port = await getFreePort();
  const prefix = benchSampleConfig(target.url, port).keyPrefix;
  const stockKey = `${prefix}seckill:${ITEM_ID}:stock`;
  const soldKey = `${prefix}seckill:${ITEM_ID}:sold`;
  await target.admin.mset(stockKey, String(initialStock), soldKey, '0');
  const server = spawnWorker('bench/http/serve.ts', {
    env: { BENCH_HTTP_APP: app, BENCH_REDIS_URL: target.url, BENCH_PORT: String(port) },
  });
  try {
    await server.waitForMessage((m: { type?: string }) => m.type === 'listening', 90_000);
    const url = `http://127.0.0.1:${port}/seckill/${ITEM_ID}`;
    // A short warm-up on another item (JIT, connections, scripts), outside the measured run.
    await autocannon({
      url: `http://127.0.0.1:${port}/seckill/warmup`,
      method: 'POST',
      connections: 4,
      amount: 40,
    });
    // sampleInt 10 ms: autocannon reports a run's duration at its next sampling tick (default every
    // 1,000 ms), which would round a 6.1 s run up to 7 s and a 1.01 s one up to 2 s; req/s below is
    // requests / duration.
    const result = await autocannon({
      url,
      method: 'POST',
      connections,
      amount: requests,
      timeout: 120,
      sampleInt: 10,
    });
    const [stock, sold] = (await target.admin.mget(stockKey, soldKey)).map((v) => Number(v ?? 0));
    const ok = result['2xx'];
    return {
      app,
      stock: initialStock,
      connections,
      requests: result.requests.total,
      rps: round(result.requests.total / result.duration),
      p50Ms: round(result.latency.p50),
      p99Ms: round(result.latency.p99),
      maxMs: round(result.latency.max),
      ok,
      non2xx: result.non2xx,
      soldOut: result.statusCodeStats?.['409']?.count ?? 0,
      errors: result.errors + result.timeouts,
      sold: sold!,
      stockLeft: stock!,
      oversold: sold! - (initialStock - stock!),
    };
  } finally {
    server.send('exit');
    await server.stop(10_000);
  }
}
