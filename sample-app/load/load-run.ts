import autocannon from 'autocannon';
import type { DemoRoute } from './demo-args';

/** Everything measured for one route. Field names are the demo's JSON contract. */
export interface RouteResult {
  route: DemoRoute;
  connections: number;
  requests: number;
  workers: number;
  /** Units on sale at the start. */
  stock: number;
  /** Responses received (any status). */
  completed: number;
  durationSec: number;
  /** Responses per second over the whole run. */
  rps: number;
  /** Latency of every response (sold-out answers included), ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** 2xx answers: purchases that went through. */
  ok: number;
  /** Every non-2xx answer (sold out included). */
  non2xx: number;
  /** 409 sold out: expected once the stock is gone, NOT an error. */
  soldOut: number;
  /** 423 Locked: the lock wait ran out (counted in errors: the demo's wait is meant to absorb the load). */
  busy: number;
  /** Socket errors + timeouts + any answer other than 2xx and 409. Must be 0 on the locked route. */
  errors: number;
  socketErrors: number;
  timeouts: number;
  /** Count per unexpected status code (neither 2xx nor 409). */
  unexpectedStatus: Record<string, number>;
  /** Units the app counted as sold (INCR sold), and stock left, read back after the run. */
  sold: number;
  stockLeft: number;
  /**
   * Units sold that the stock did not cover: sold − (stock − stockLeft). With the lock it is 0;
   * without it, lost updates (two buyers read the same stock) make it positive.
   */
  oversold: number;
}

/** What drives one route. */
export interface LoadRunOptions {
  baseUrl: string;
  route: DemoRoute;
  connections: number;
  requests: number;
  workers: number;
  stock: number;
  /** Receives a progress line about once a second. */
  progress: (line: string) => void;
}

/** Per-request timeout of the load generator: above the app's lock wait, so a 423 arrives before it. */
const REQUEST_TIMEOUT_SEC = 120;

/** Resets the item, fires `requests` purchases over `connections` connections, reads the item back. */
export async function runRoute(options: LoadRunOptions): Promise<RouteResult> {
  const { baseUrl, route, connections, requests, stock } = options;
  const itemId = `demo-${route}`;
  const itemUrl = `${baseUrl}/seckill/${itemId}`;
  await httpJson('PUT', itemUrl, { stock });

  const { result, elapsedMs } = await drive(`${itemUrl}${route === 'unsafe' ? '/unsafe' : ''}`, options);
  const durationSec = Math.round(elapsedMs / 10) / 100;
  const after = (await httpJson('GET', itemUrl)) as { stock: number; sold: number };

  const statusCounts = Object.entries(result.statusCodeStats ?? {}).map(
    ([code, s]) => [code, s?.count ?? 0] as const,
  );
  const countOf = (code: string): number => statusCounts.find(([c]) => c === code)?.[1] ?? 0;
  const unexpectedStatus = Object.fromEntries(
    statusCounts.filter(([code]) => !code.startsWith('2') && code !== '409'),
  );
  const unexpected = Object.values(unexpectedStatus).reduce((a, b) => a + b, 0);
  const completed = statusCounts.reduce((sum, [, n]) => sum + n, 0);
  // autocannon's `errors` already includes its timeouts.
  const socketErrors = result.errors - result.timeouts;
  return {
    route,
    connections,
    requests,
    workers: options.workers,
    stock,
    completed,
    durationSec,
    rps: durationSec > 0 ? Math.round(completed / durationSec) : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    ok: result['2xx'],
    non2xx: result.non2xx,
    soldOut: countOf('409'),
    busy: countOf('423'),
    errors: result.errors + unexpected,
    socketErrors,
    timeouts: result.timeouts,
    unexpectedStatus,
    sold: after.sold,
    stockLeft: after.stock,
    oversold: after.sold - (stock - after.stock),
  };
}

/**
 * Runs autocannon. Elapsed time is measured here, first request to last answer: autocannon's own
 * `duration` only advances in whole sampling seconds, which would distort short runs.
 */
function drive(
  url: string,
  options: LoadRunOptions,
): Promise<{ result: autocannon.Result; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let lastAnswer = started;
    let responses = 0;
    let seconds = 0;
    const instance = autocannon(
      {
        url,
        method: 'POST',
        connections: options.connections,
        amount: options.requests,
        timeout: REQUEST_TIMEOUT_SEC,
        pipelining: 1,
      },
      (error, result) => (error ? reject(error) : resolve({ result, elapsedMs: lastAnswer - started })),
    );
    let lastSecond = 0;
    instance.on('response', () => {
      responses++;
      lastAnswer = performance.now();
    });
    // autocannon ticks once a second while running (and once more when it stops: skipped).
    instance.on('tick', () => {
      if (responses >= options.requests) return;
      seconds++;
      options.progress(
        `[${options.route}] ${String(seconds).padStart(3)} s  ${responses}/${options.requests} responses  (${responses - lastSecond}/s)`,
      );
      lastSecond = responses;
    });
  });
}

/** One HTTP call with a JSON body/answer; throws on a non-2xx status. */
export async function httpJson(method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}
