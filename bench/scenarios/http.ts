import autocannon from 'autocannon';
import { getFreePort } from '../../test/support/free-port';
import { spawnWorker } from '../../test/support/spawn-worker';
import type { BenchProfile } from '../config';
import { benchSampleConfig, HTTP_APPS, ITEM_ID, type HttpAppId } from '../http/seckill-bench-config';
import type { RedisTarget } from '../redis-target';
import { round } from '../stats';

/** One app under autocannon. */
export interface HttpFigures {
  app: HttpAppId;
  connections: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  ok: number;
  non2xx: number;
  errors: number;
  sold: number;
  stockLeft: number;
  /** Units sold beyond what left the stock (lost decrements): must be 0 under a lock. */
  oversold: number;
  note?: string;
}

/**
 * Drives `POST /seckill/item1` of each app in turn (its own process, the same Redis) with
 * autocannon; stock = requests, so every request should buy one unit.
 */
export async function runHttp(
  target: RedisTarget,
  profile: BenchProfile,
  log: (l: string) => void,
): Promise<HttpFigures[]> {
  const out: HttpFigures[] = [];
  for (const app of HTTP_APPS) {
    try {
      out.push(await runOne(app, target, profile));
      const f = out[out.length - 1]!;
      log(
        `  ${app}: ${f.rps} req/s, p99 ${f.p99Ms} ms, non2xx ${f.non2xx}, errors ${f.errors}, oversold ${f.oversold}`,
      );
    } catch (err) {
      const note = err instanceof Error ? err.message.split('\n')[0]! : String(err);
      log(`  ${app}: not measured: ${note}`);
      out.push({
        app,
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
      });
    }
  }
  return out;
}

async function runOne(app: HttpAppId, target: RedisTarget, profile: BenchProfile): Promise<HttpFigures> {
  const { connections, requests } = profile.http;
  await target.clean();
  const port = await getFreePort();
  const prefix = benchSampleConfig(target.url, port).keyPrefix;
  const stockKey = `${prefix}seckill:${ITEM_ID}:stock`;
  const soldKey = `${prefix}seckill:${ITEM_ID}:sold`;
  await target.admin.mset(stockKey, String(requests), soldKey, '0');
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
    const result = await autocannon({ url, method: 'POST', connections, amount: requests, timeout: 120 });
    const [stock, sold] = (await target.admin.mget(stockKey, soldKey)).map((v) => Number(v ?? 0));
    const ok = result['2xx'];
    return {
      app,
      connections,
      requests: result.requests.total,
      rps: round(result.requests.total / result.duration),
      p50Ms: round(result.latency.p50),
      p99Ms: round(result.latency.p99),
      maxMs: round(result.latency.max),
      ok,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      sold: sold!,
      stockLeft: stock!,
      oversold: sold! - (requests - stock!),
    };
  } finally {
    server.send('exit');
    await server.stop(10_000);
  }
}
