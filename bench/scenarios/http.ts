import autocannon from 'autocannon';
import { getFreePort } from '../../test/support/free-port';
import { spawnWorker, type WorkerProcess } from '../../test/support/spawn-worker';
import type { BenchProfile } from '../config';
import {
  benchSampleConfig,
  HTTP_APPS,
  HTTP_CEILING,
  ITEM_ID,
  type HttpAppId,
} from '../http/seckill-bench-config';
import type { RedisTarget } from '../redis-target';
import { median, pairedRatio, round, type PairedRatio } from '../stats';

/**
 * What autocannon measured: in one round (HttpRound) or over every round of one app and stock
 * (HttpFigures: counts summed, req/s pooled, p50 / p99 the median of the rounds', max over all).
 */
export interface HttpRunFigures {
  /** Requests answered. */
  requests: number;
  /** Requests / duration (pooled: over the summed duration of the measured rounds). */
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
  /** Set when not measured (the figures are then 0 / NaN and left out of every summary). */
  note?: string;
}

/** One app's run in one round, at one initial stock. */
export interface HttpRound extends HttpRunFigures {
  /** 0-based round number. */
  round: number;
  /** 0-based position of the app within its round (the order rotates from round to round). */
  slot: number;
  soldOut: number;
}

/** A ratio to the ceiling computed round by round (paired): its median and spread. */
export type { PairedRatio };

/**
 * One app under autocannon at one initial stock, over every round. Runs saved before the paired
 * rounds (issue 46) have one pass and none of the optional fields: `requests` is then that pass's.
 */
export interface HttpFigures extends HttpRunFigures {
  app: HttpAppId;
  /** Initial stock (units on sale) of each round; = requests per round: no request finds it sold out. */
  stock?: number;
  connections: number;
  /** Rounds asked for. */
  rounds?: number;
  /** Requests asked for in each round. */
  requestsPerRound?: number;
  /** req/s / the ceiling's req/s in the same round and stock; absent for the ceiling itself. */
  vsCeiling?: PairedRatio;
  perRound?: HttpRound[];
}

/** One app's process, started once and kept up across rounds. */
interface RunningApp {
  app: HttpAppId;
  port: number;
  server?: WorkerProcess;
  /** Why it is not measured (it did not start). */
  note?: string;
}

/**
 * Drives `POST /seckill/item1` of each app (its own process, the same Redis) with autocannon in
 * alternating rounds: each round runs every app once per initial stock of the profile
 * (`stockShares` × requests per round: 1 = every request buys one unit, less = it sells out part-way
 * and the rest get 409), the apps in an order rotated by one each round, so that a drift in the
 * machine's load falls on every app alike. Each app's process is started once and kept up; the stock
 * is reset before every run. Each app's ratio to the ceiling is taken per round (paired) and
 * summarized by its median and min–max.
 */
export async function runHttp(
  target: RedisTarget,
  profile: BenchProfile,
  log: (l: string) => void,
): Promise<HttpFigures[]> {
  const { rounds, requests, stockShares } = profile.http;
  const stocks = stockShares.map((share) => Math.round(requests * share));
  await target.clean();
  const apps: RunningApp[] = [];
  try {
    for (const app of HTTP_APPS) apps.push(await startApp(app, target, log));
    log(
      `  ${rounds} round(s) × ${requests} requests per app and stock (${stocks.join(', ')}), ` +
        `${profile.http.connections} connections, order rotated each round`,
    );
    const runs = new Map<string, HttpRound[]>();
    for (let r = 0; r < rounds; r++) {
      const order = apps.map((_, i) => apps[(i + r) % apps.length]!);
      for (const stock of stocks) {
        const line: string[] = [];
        for (const [slot, a] of order.entries()) {
          if (a.note) continue;
          const run = await runOnce(a, stock, r, slot, target, profile);
          const key = runKey(a.app, stock);
          runs.set(key, [...(runs.get(key) ?? []), run]);
          line.push(
            run.note
              ? `${a.app} not measured (${run.note})`
              : `${a.app} ${round(run.rps)}${run.oversold ? ` OVERSOLD ${run.oversold}` : ''}`,
          );
        }
        log(`    round ${r + 1}/${rounds}, stock ${stock}, req/s: ${line.join(', ')}`);
      }
    }
    const out: HttpFigures[] = [];
    for (const stock of stocks) {
      const ceiling = runs.get(runKey(HTTP_CEILING, stock)) ?? [];
      for (const a of apps) {
        const mine = runs.get(runKey(a.app, stock)) ?? [];
        const f = a.note
          ? notMeasured(a.app, stock, a.note, profile)
          : summarize(a.app, stock, mine, profile);
        const ratio = a.app === HTTP_CEILING ? undefined : paired(mine, ceiling);
        if (ratio) f.vsCeiling = ratio;
        out.push(f);
        const v = f.vsCeiling;
        log(
          `  stock ${stock}, ${a.app}: ${f.note ? `not measured: ${f.note}` : `${f.rps} req/s over ${f.requests} requests`}` +
            (v ? `, vs ceiling ${v.median} (${v.min}–${v.max}, ${v.rounds} rounds)` : '') +
            (f.note ? '' : `, p99 ${f.p99Ms} ms, errors ${f.errors}, oversold ${f.oversold}`),
        );
      }
    }
    return out;
  } finally {
    for (const a of apps) {
      if (!a.server) continue;
      a.server.send('exit');
      await a.server.stop(10_000);
    }
  }
}

function runKey(app: HttpAppId, stock: number): string {
  return `${stock}\u0000${app}`;
}

async function startApp(app: HttpAppId, target: RedisTarget, log: (l: string) => void): Promise<RunningApp> {
  const port = await getFreePort();
  const server = spawnWorker('bench/http/serve.ts', {
    env: { BENCH_HTTP_APP: app, BENCH_REDIS_URL: target.url, BENCH_PORT: String(port) },
  });
  try {
    await server.waitForMessage((m: { type?: string }) => m.type === 'listening', 90_000);
    // A warm-up on another item with its own stock (JIT, connections, scripts; the whole purchase
    // path), outside every measured run; the process then stays warm across the rounds.
    const warmup = 200;
    const prefix = benchSampleConfig(target.url, port).keyPrefix;
    await target.admin.mset(
      `${prefix}seckill:warmup:stock`,
      String(warmup),
      `${prefix}seckill:warmup:sold`,
      '0',
    );
    await autocannon({
      url: `http://127.0.0.1:${port}/seckill/warmup`,
      method: 'POST',
      connections: 20,
      amount: warmup,
    });
    return { app, port, server };
  } catch (err) {
    const note = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    log(`  ${app}: not measured: ${note}`);
    await server.stop(10_000);
    return { app, port, note };
  }
}

async function runOnce(
  a: RunningApp,
  initialStock: number,
  roundNo: number,
  slot: number,
  target: RedisTarget,
  profile: BenchProfile,
): Promise<HttpRound> {
  const { connections, requests } = profile.http;
  const failed = (note: string): HttpRound => ({
    round: roundNo,
    slot,
    ...nothingMeasured(note),
    soldOut: 0,
  });
  if (!a.server?.running) return failed(`the app's process exited: ${a.server?.stderr().slice(-200)}`);
  const prefix = benchSampleConfig(target.url, a.port).keyPrefix;
  const stockKey = `${prefix}seckill:${ITEM_ID}:stock`;
  const soldKey = `${prefix}seckill:${ITEM_ID}:sold`;
  // Every run starts from the same state: this stock on sale, nothing sold.
  await target.admin.mset(stockKey, String(initialStock), soldKey, '0');
  try {
    // sampleInt 10 ms: autocannon reports a run's duration at its next sampling tick (default every
    // 1,000 ms), which would round a 6.1 s run up to 7 s and a 1.01 s one up to 2 s; req/s below is
    // requests / duration.
    const result = await autocannon({
      url: `http://127.0.0.1:${a.port}/seckill/${ITEM_ID}`,
      method: 'POST',
      connections,
      amount: requests,
      timeout: 120,
      sampleInt: 10,
    });
    const [stock, sold] = (await target.admin.mget(stockKey, soldKey)).map((v) => Number(v ?? 0));
    return {
      round: roundNo,
      slot,
      requests: result.requests.total,
      rps: result.requests.total / result.duration,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      maxMs: result.latency.max,
      ok: result['2xx'],
      non2xx: result.non2xx,
      soldOut: result.statusCodeStats?.['409']?.count ?? 0,
      errors: result.errors + result.timeouts,
      sold: sold!,
      stockLeft: stock!,
      oversold: sold! - (initialStock - stock!),
    };
  } catch (err) {
    return failed(err instanceof Error ? err.message.split('\n')[0]! : String(err));
  }
}

/** One app's rounds at one stock, summed (counts), pooled (req/s) or their median (latency percentiles). */
function summarize(app: HttpAppId, stock: number, all: HttpRound[], profile: BenchProfile): HttpFigures {
  const runs = all.filter((r) => !r.note);
  const sum = (pick: (r: HttpRound) => number) => runs.reduce((s, r) => s + pick(r), 0);
  const seconds = sum((r) => r.requests / r.rps);
  const failed = all.filter((r) => r.note);
  return {
    app,
    stock,
    connections: profile.http.connections,
    requests: sum((r) => r.requests),
    rounds: profile.http.rounds,
    requestsPerRound: profile.http.requests,
    rps: round(sum((r) => r.requests) / seconds),
    p50Ms: round(median(runs.map((r) => r.p50Ms))),
    p99Ms: round(median(runs.map((r) => r.p99Ms))),
    maxMs: runs.length ? round(Math.max(...runs.map((r) => r.maxMs))) : NaN,
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    soldOut: sum((r) => r.soldOut),
    errors: sum((r) => r.errors),
    sold: sum((r) => r.sold),
    stockLeft: sum((r) => r.stockLeft),
    oversold: sum((r) => r.oversold),
    perRound: all.map((r) => ({
      ...r,
      rps: round(r.rps),
      p50Ms: round(r.p50Ms),
      p99Ms: round(r.p99Ms),
      maxMs: round(r.maxMs),
    })),
    // A round that failed is left out of the sums and noted in perRound; the figure as a whole is
    // "not measured" only when no round was.
    ...(runs.length === 0 ? { note: `no round measured: ${failed[0]?.note ?? 'no run'}` } : {}),
  };
}

/** req/s over the ceiling's, round by round where both were measured. */
function paired(runs: HttpRound[], ceiling: HttpRound[]): PairedRatio | undefined {
  const perRound: number[] = [];
  for (const r of runs) {
    const c = ceiling.find((x) => x.round === r.round);
    if (!r.note && c && !c.note) perRound.push(r.rps / c.rps);
  }
  return pairedRatio(perRound);
}

function notMeasured(app: HttpAppId, stock: number, note: string, profile: BenchProfile): HttpFigures {
  return {
    app,
    stock,
    connections: 0,
    rounds: profile.http.rounds,
    requestsPerRound: profile.http.requests,
    ...nothingMeasured(note),
  };
}

/** The figures of a run (or an app) that was not measured, and why. */
function nothingMeasured(note: string): HttpRunFigures {
  const none = { requests: 0, ok: 0, non2xx: 0, errors: 0, sold: 0, stockLeft: 0, oversold: 0 };
  return { ...none, rps: NaN, p50Ms: NaN, p99Ms: NaN, maxMs: NaN, note };
}
