import type { RouteResult } from './load-run';

/** Why the locked route's result is not what the lock promises; empty when it is. */
export function lockedRouteProblems(r: RouteResult): string[] {
  const problems: string[] = [];
  const expectedSold = Math.min(r.stock, r.requests);
  if (r.oversold !== 0) problems.push(`it oversold by ${r.oversold} unit(s)`);
  if (r.errors !== 0) problems.push(`${r.errors} request(s) failed (${describeErrors(r)})`);
  if (r.sold !== expectedSold) problems.push(`it sold ${r.sold} unit(s), expected ${expectedSold}`);
  if (r.stockLeft !== r.stock - r.sold)
    problems.push(`stock left is ${r.stockLeft}, expected ${r.stock - r.sold}`);
  if (r.completed !== r.requests) problems.push(`${r.completed} of ${r.requests} requests got an answer`);
  return problems;
}

function describeErrors(r: RouteResult): string {
  const parts = [`${r.socketErrors} socket error(s)`, `${r.timeouts} timeout(s)`];
  for (const [code, n] of Object.entries(r.unexpectedStatus)) parts.push(`${n} × HTTP ${code}`);
  return parts.join(', ');
}

/** The human-readable block for one route. */
export function formatRoute(r: RouteResult): string {
  const path = r.route === 'locked' ? 'POST /seckill/demo-locked' : 'POST /seckill/demo-unsafe/unsafe';
  const verdict =
    r.route === 'locked'
      ? lockedRouteProblems(r).length === 0
        ? 'OK: no oversell, no errors'
        : `FAILED: ${lockedRouteProblems(r).join('; ')}`
      : r.oversold > 0
        ? `as expected without a lock: ${r.oversold} unit(s) sold that did not exist`
        : 'did not oversell this time (a race is luck: raise --connections or SECKILL_DELAY_MS)';
  return [
    `${r.route.toUpperCase()} route  ${path}`,
    `  load        ${r.connections} connections, ${r.requests} requests, ${r.workers} app workers, stock ${r.stock}`,
    `  throughput  ${r.rps} req/s (${r.completed} answers in ${r.durationSec} s)`,
    `  latency     p50 ${r.p50Ms} ms   p99 ${r.p99Ms} ms   max ${r.maxMs} ms`,
    `  answers     ${r.ok} bought (2xx), ${r.soldOut} sold out (409), ${r.busy} busy (423), ${r.errors} errors` +
      (r.errors ? ` [${describeErrors(r)}]` : ''),
    `  in Redis    sold ${r.sold}, stock left ${r.stockLeft}, oversold ${r.oversold}`,
    `  verdict     ${verdict}`,
  ].join('\n');
}

/** The machine-readable line for one route (stable field names, see RouteResult). */
export function jsonLine(r: RouteResult): string {
  return JSON.stringify(r);
}
