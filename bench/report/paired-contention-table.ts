import { OURS, OURS_LEASE } from '../adapters';
import { median } from '../stats';
import { pairedContentionRatio, type PairedContention } from '../scenarios/figures';
import { table } from './markdown-table';
import type { BenchResults } from './results';

/**
 * The paired contention rounds (issue 46), one table per critical-section length: each row's
 * acquisitions/s round by round, and our rows' ratios to every reference taken within each round.
 * A run saved before the paired rounds has none: nothing is rendered.
 */
export function renderPairedContention(r: BenchResults): string[] {
  const all = r.contentionPaired ?? [];
  if (!all.length) return [];
  const out: string[] = [];
  for (const p of all) {
    const ours = p.rows.filter((row) => row.id === OURS || row.id === OURS_LEASE);
    out.push(
      `\n### Contention, paired rounds: critical section ${p.csMs} ms, ${p.rounds} rounds of ${p.durationMs.toLocaleString('en-US')} ms per row\n`,
    );
    out.push(
      table(
        [
          'row',
          'acq/s, median of rounds',
          'min–max',
          'acq/s by round',
          'failed',
          'lost',
          ...ours.map((o) => `${o.name} ÷ row, median (min–max)`),
        ],
        p.rows.map((row) => [
          row.name,
          Math.round(median(row.acqPerSec)),
          `${Math.round(Math.min(...row.acqPerSec))}–${Math.round(Math.max(...row.acqPerSec))}`,
          row.acqPerSec.map((v) => Math.round(v)).join(' / '),
          sum(row.failed),
          sum(row.lostUpdates),
          ...ours.map((o) => ratioCell(p, o.id, row.id)),
        ]),
      ),
    );
  }
  out.push(
    `\nAfter the round-robin part: in each round every row runs once, back to back, each library's ` +
      `${r.meta.contention.processes} worker processes started once for all its rounds,` +
      ' the order rotated by one row every round; runs stop at the ' +
      "round's time, not at a count. A ratio is taken within a round (rounds with a failed acquisition or a lost " +
      'update on either side are left out); the contention targets against the best peer (under 1 ms) and the ' +
      'serial section, and fixed lease vs watchdog, read its median. Below 1 ms the references are the fastest ' +
      'peers of the round-robin part; from 1 ms on, the critical section run serially (the same callers behind ' +
      'an in-process mutex in the bench process, no lock on Redis).',
  );
  return out;
}

function ratioCell(p: PairedContention, ours: string, reference: string): string {
  if (ours === reference) return '1';
  const ratio = pairedContentionRatio(p, ours, reference);
  return ratio ? `${ratio.median} (${ratio.min}–${ratio.max})` : '–';
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
