import { OUR_ROWS, OURS, RAW, type LibraryId } from '../adapters';
import type { ContentionFigures, LibraryFigures } from '../scenarios/lock-suite';
import { round } from '../stats';
import type { BenchResults, TargetResult } from './results';

/**
 * The targets, all against libraries measured in the same run:
 * uncontended ≥ raw baseline; under contention throughput ≥ best peer, wait p99 ≤ best peer / 10,
 * Redis CPU per acquisition ≤ best peer / 2; zero lost updates everywhere.
 */
export function evaluateTargets(
  results: Pick<BenchResults, 'libraries' | 'http' | 'floor'>,
  oursId: LibraryId = OURS,
): TargetResult[] {
  const out: TargetResult[] = [];
  const ours = results.libraries.find((l) => l.id === oursId);
  const raw = results.libraries.find((l) => l.id === RAW);
  const peers = results.libraries.filter((l) => l.id !== RAW && !OUR_ROWS.includes(l.id));
  if (ours && raw) {
    for (const u of ours.uncontended) {
      const base = raw.uncontended.find((r) => r.callers === u.callers);
      if (!base) continue;
      out.push(
        compare(
          `uncontended, ${u.callers} caller(s): ops/s ≥ raw baseline`,
          u.opsPerSec,
          base.opsPerSec,
          'higher',
          1,
          'raw baseline',
        ),
      );
    }
  }
  if (ours && peers.length) {
    for (const c of ours.contention) {
      // A peer that gave up on acquisitions or lost updates is not a "best peer" for any figure.
      const peerRuns = peers
        .map((p) => ({ name: p.name, run: p.contention.find((x) => x.csMs === c.csMs) }))
        .filter((p): p is { name: string; run: ContentionFigures } => p.run !== undefined)
        .filter((p) => p.run.failed === 0 && p.run.lostUpdates === 0);
      if (!peerRuns.length) continue;
      const best = (pick: (r: ContentionFigures) => number, better: 'higher' | 'lower') =>
        peerRuns.reduce((a, b) =>
          (better === 'higher' ? pick(b.run) > pick(a.run) : pick(b.run) < pick(a.run)) ? b : a,
        );
      const tput = best((r) => r.acqPerSec, 'higher');
      out.push(
        compare(
          `contention ${c.csMs} ms: acquisitions/s ≥ best peer`,
          c.acqPerSec,
          tput.run.acqPerSec,
          'higher',
          1,
          tput.name,
        ),
      );
      const p99 = best((r) => r.wait.p99, 'lower');
      out.push(
        compare(
          `contention ${c.csMs} ms: wait p99 ≤ best peer / 10`,
          c.wait.p99,
          p99.run.wait.p99,
          'lower',
          10,
          p99.name,
        ),
      );
      const cpu = best((r) => r.cpuUsPerAcq, 'lower');
      const row = compare(
        `contention ${c.csMs} ms: Redis CPU/acq ≤ best peer / 2`,
        c.cpuUsPerAcq,
        cpu.run.cpuUsPerAcq,
        'lower',
        2,
        cpu.name,
      );
      // For reading the figure: what the critical section's own GET + SET cost Redis, run alone.
      const floor = results.floor?.find((f) => f.csMs === c.csMs)?.cpuUsPerAcq;
      if (floor !== undefined) row.detail += `; the critical section alone costs ${floor} µs`;
      out.push(row);
    }
  }
  if (oursId === OURS) out.push(lostUpdates(results.libraries, results.http));
  return out;
}

function compare(
  target: string,
  ours: number,
  reference: number,
  better: 'higher' | 'lower',
  factor: number,
  referenceName: string,
): TargetResult {
  const goal = better === 'higher' ? reference * factor : reference / factor;
  const pass = better === 'higher' ? ours >= goal : ours <= goal;
  return {
    target,
    ours,
    reference,
    ratio: round(ours / reference),
    pass,
    detail: `ours ${ours} vs ${referenceName} ${reference} (goal ${better === 'higher' ? '≥' : '≤'} ${round(goal)})`,
  };
}

function lostUpdates(libraries: LibraryFigures[], http: BenchResults['http']): TargetResult {
  const offenders: string[] = [];
  for (const l of libraries)
    for (const c of l.contention)
      if (c.lostUpdates !== 0) offenders.push(`${l.name} cs=${c.csMs}ms: ${c.lostUpdates}`);
  for (const h of http ?? []) if (h.oversold !== 0) offenders.push(`${h.app} HTTP: oversold ${h.oversold}`);
  return {
    target: '0 lost updates everywhere (contention and HTTP oversold)',
    ours: offenders.length,
    reference: 0,
    pass: offenders.length === 0,
    detail: offenders.length ? offenders.join('; ') : 'every library, every run: 0',
  };
}
