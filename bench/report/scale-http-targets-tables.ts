import { HTTP_CEILING } from '../http/seckill-bench-config';
import type { HttpFigures } from '../scenarios/http';
import { table } from './markdown-table';
import { stockLabel } from './targets';
import type { BenchResults } from './results';

/** The scale, HTTP and PASS/MISS sections of a run, as Markdown lines. */
export function renderScaleHttpAndTargets(r: BenchResults): string[] {
  const out: string[] = [];
  if (r.flood) {
    const f = r.flood;
    out.push(`\n### Flood (nestjs-distributed-lock): waiters on one busy key in one process\n`);
    out.push(
      table(
        [
          'waiters',
          'waitMs',
          'enqueue ms',
          'last settled after deadline ms',
          'loop lag max ms',
          'loop lag p99 ms',
          'heap B/waiter',
          'listener warnings',
        ],
        [
          [
            f.waiters,
            f.waitMs,
            f.enqueueMs,
            f.lastSettledAfterDeadlineMs,
            f.maxLoopLagMs,
            f.p99LoopLagMs,
            f.heapBytesPerWaiter,
            f.listenerWarnings,
          ],
        ],
      ),
    );
  }
  if (r.scale) {
    out.push(`\n### Scale (nestjs-distributed-lock): distinct locks held by one process\n`);
    out.push(
      table(
        [
          'locks held',
          'client heap MB',
          'heap B/lock',
          'active timers',
          'Redis B/lock',
          'renew period ms',
          'renewal round trips/s',
          'renewal Redis cmds/s',
          'renewal Redis CPU ms/s',
        ],
        r.scale.held.map((h) => [
          h.locks,
          h.heapMb,
          h.locks >= 1000 ? h.heapBytesPerLock : '–',
          h.activeTimers,
          h.locks >= 1000 ? h.redisBytesPerLock : '–',
          h.renewEveryMs,
          h.renewalClientCmdsPerSec,
          h.renewalServerCmdsPerSec,
          Math.round(h.renewalCpuUsPerSec / 100) / 10,
        ]),
      ),
    );
    const w = r.scale.waiters;
    if (w) {
      out.push(
        `\n### Scale: ${w.waiters.toLocaleString('en-US')} waiters on ${w.keys} held keys (one process)\n`,
      );
      out.push(
        table(
          [
            'channels on server',
            'subscribers per channel',
            'client heap MB',
            'heap B/waiter',
            'active timers',
            'idle round trips/s',
            'idle Redis cmds/s',
            'drain ms',
            'granted',
            'failed',
            'channels after',
          ],
          [
            [
              w.serverChannels,
              `${w.subscribersPerChannel.min}–${w.subscribersPerChannel.max}`,
              w.heapMb,
              w.heapBytesPerWaiter,
              w.activeTimers,
              w.idleClientCmdsPerSec,
              w.idleServerCmdsPerSec,
              w.drainMs,
              w.granted,
              w.failed,
              w.channelsAfter,
            ],
          ],
        ),
      );
    }
  }
  if (r.http?.length) {
    const h0 = r.http.find((h) => h.connections) ?? r.http[0]!;
    out.push(...httpTable(r.http, h0));
    out.push(
      '\nin-process mutex (ceiling): the same route and SeckillService in one process behind a promise-chain ' +
        'mutex per item, no Redis lock: what a lock on one key can approach at best. 409: sold out (expected once ' +
        'the stock is gone).',
    );
  }
  if (r.targets.length) {
    out.push(`\n### Targets (same run)\n`);
    out.push(
      table(
        ['target', 'result', 'ratio', 'detail'],
        r.targets.map((t) => [t.target, t.pass ? 'PASS' : 'MISS', t.ratio ?? '', t.detail ?? '']),
      ),
    );
  }
  if (r.targets.length)
    out.push(
      '\nBest peer: the best of the peers (not the raw baseline) with 0 failed acquisitions and 0 lost updates. ' +
        'ratio: ours / reference (the bound itself for the fairness rows).',
    );
  if (r.skipped.length)
    out.push(`\nNot measured: ${r.skipped.map((s) => `${s.id} (${s.reason})`).join('; ')}`);
  return out;
}

/**
 * The HTTP rows. A run with paired rounds (issue 46) adds, per app and stock, the median and min–max
 * of its per-round ratios to the ceiling and the requests over all rounds; a run saved before them
 * has one pass per app and stock.
 */
function httpTable(http: HttpFigures[], h0: HttpFigures): string[] {
  const paired = h0.rounds !== undefined;
  const rounds = h0.rounds ?? 1;
  const perRound = h0.requestsPerRound ?? h0.requests;
  const heading = paired
    ? `${rounds} alternating rounds × ${perRound.toLocaleString('en-US')} requests per app and stock`
    : `${perRound.toLocaleString('en-US')} requests`;
  const out = [
    `\n### HTTP seckill: POST /seckill/item1, ${h0.connections} connections, ${heading} (autocannon)\n`,
    table(
      [
        'app',
        paired ? 'stock (each round)' : 'stock',
        'req/s',
        ...(paired ? ['vs ceiling (median of rounds)', 'min–max', 'requests'] : []),
        'p50 ms',
        'p99 ms',
        'max ms',
        '2xx',
        '409',
        'other non2xx',
        'errors',
        'sold',
        'oversold',
      ],
      http.map((h) => {
        const v = h.vsCeiling;
        const measured = (h.perRound ?? []).filter((x) => !x.note).length;
        const pairedCells = [
          v ? v.median : h.app === HTTP_CEILING ? '1' : '–',
          v ? `${v.min}–${v.max}` : '–',
          `${h.requests.toLocaleString('en-US')}${measured < rounds ? ` (${measured}/${rounds} rounds)` : ''}`,
        ];
        return [
          h.app,
          `${h.stock ?? perRound} (${stockLabel(h)})`,
          h.rps,
          ...(paired ? pairedCells : []),
          h.p50Ms,
          h.p99Ms,
          h.maxMs,
          h.ok,
          h.soldOut ?? '–',
          h.non2xx - (h.soldOut ?? 0),
          h.errors,
          h.sold,
          h.note ? `– (${h.note})` : h.oversold,
        ];
      }),
    ),
  ];
  if (paired)
    out.push(
      `\nThe apps run in turn, round after round, each app's process started once and warmed up; the order ` +
        `rotates by one app each round and the stock is reset before every run. req/s: all rounds' requests over ` +
        `their summed duration. vs ceiling: req/s over the ceiling's in the same round and stock, the median of the ` +
        `rounds and their min–max (if rounds vary independently, the min–max of n rounds holds the true median ` +
        `with probability 1 − 2^(1−n): 75 % for 3 rounds, 97 % for 6). p50, p99: the median of the rounds'; max, ` +
        `sold and the counts: over all rounds.`,
    );
  return out;
}
