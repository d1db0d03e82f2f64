import Redis from 'ioredis';
import type { LibraryId } from '../adapters';
import type { BenchProfile } from '../config';
import type { RedisTarget } from '../redis-target';
import { floorRun } from './critical-section-floor';
import {
  contentionPeers,
  pairedContentionRatio,
  SERIAL,
  type LibraryFigures,
  type PairedContention,
  type PairedContentionRow,
} from './figures';
import { contentionRun, ready, spawnLibWorkers, stopAll, type LibWorker } from './lib-workers';

/** What a paired round may run: a library's worker processes or the serial critical section. */
type RowId = LibraryId | typeof SERIAL;

/**
 * The references of our rows at `csMs` in the paired rounds: from 1 ms on, the critical section run
 * serially (issue 46's ceiling); below, the `count` fastest peers of the round-robin part of this run.
 * More than one peer: the two fastest rows are often one library's two lease paths, and the
 * round-robin ranking carries the very noise the rounds are there to correct.
 */
export function pairedReferences(libraries: LibraryFigures[], csMs: number, count: number): RowId[] {
  if (csMs >= 1) return [SERIAL];
  return contentionPeers(libraries, csMs)
    .sort((a, b) => b.run.acqPerSec - a.run.acqPerSec)
    .slice(0, count)
    .map((p) => p.id);
}

/**
 * Issue 46's contention rows, paired (`contention.pairedRounds` in bench/config.ts). For each
 * critical-section length, rounds of our rows and their references (`referencesAt`) back to back,
 * `pairedMs` each, the order rotated by one every round, so a noisy stretch of the shared machine
 * falls on both sides of a ratio. Each library's worker processes are started once and kept for all
 * its rounds (they warm up when they start); only one library runs at a time. A library used by no
 * later critical-section length is stopped before it.
 */
export async function runPairedContention(
  target: RedisTarget,
  profile: BenchProfile,
  log: (line: string) => void,
  ours: LibraryId[],
  referencesAt: (csMs: number) => RowId[],
): Promise<PairedContention[]> {
  const { contention: c } = profile;
  if (c.pairedRounds < 1 || !ours.length) return [];
  const plan = c.csMs.map((csMs) => ({ csMs, references: referencesAt(csMs) }));
  const libraries = [...new Set(plan.flatMap((p) => [...ours, ...p.references]))].filter(
    (id): id is LibraryId => id !== SERIAL,
  );
  const lastUse = new Map<LibraryId, number>();
  plan.forEach((p, i) => {
    for (const id of [...ours, ...p.references]) if (id !== SERIAL) lastUse.set(id, i);
  });
  log(
    `\n[contention, paired] ${c.pairedRounds} rounds of ${c.pairedMs} ms per row and critical section: ` +
      plan.map((p) => `cs=${p.csMs}ms ${[...ours, ...p.references].join(', ')}`).join('; '),
  );
  const started = Date.now();
  await target.clean();
  const spawned = libraries.map((id) => ({ id, workers: spawnLibWorkers(id, c.processes, target) }));
  const running = new Map<LibraryId, { workers: LibWorker[]; name: string }>();
  const counter = new Redis(target.url);
  const out: PairedContention[] = [];
  try {
    for (const { id, workers } of spawned) {
      try {
        running.set(id, { workers, name: await ready(workers) });
      } catch (err) {
        log(
          `  ${id}: workers did not start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
        );
      }
    }
    for (const [i, { csMs, references }] of plan.entries()) {
      const present = (id: RowId) => id === SERIAL || running.has(id);
      const order = [...ours.filter(present), ...references.filter(present)];
      const oursHere = ours.filter(present);
      if (!oursHere.length || order.length === oursHere.length) {
        log(
          `  cs=${csMs}ms: nothing to pair (ours ${oursHere.length}, references ${order.length - oursHere.length})`,
        );
      } else {
        const rows = new Map<RowId, PairedContentionRow>(
          order.map((id) => [
            id,
            {
              id,
              name: id === SERIAL ? 'critical section run serially' : running.get(id)!.name,
              acqPerSec: [],
              failed: [],
              lostUpdates: [],
            },
          ]),
        );
        for (let r = 0; r < c.pairedRounds; r++) {
          const rotated = [...order.slice(r % order.length), ...order.slice(0, r % order.length)];
          for (const id of rotated) {
            // Time-bounded only: every row of a round runs for the same `pairedMs`.
            const row = rows.get(id)!;
            if (id === SERIAL) {
              const f = await floorRun(target, profile, counter, csMs, c.pairedMs, Number.MAX_SAFE_INTEGER);
              row.acqPerSec.push(f.acqPerSec);
              row.failed.push(0);
              row.lostUpdates.push(0);
            } else {
              const f = await contentionRun(
                running.get(id)!.workers,
                target,
                profile,
                csMs,
                c.pairedMs,
                Number.MAX_SAFE_INTEGER,
              );
              row.acqPerSec.push(f.acqPerSec);
              row.failed.push(f.failed);
              row.lostUpdates.push(f.lostUpdates);
            }
          }
          log(
            `  cs=${csMs}ms round ${r + 1}/${c.pairedRounds}: ` +
              rotated
                .map((id) => {
                  const row = rows.get(id)!;
                  const k = row.acqPerSec.length - 1;
                  const trouble = row.failed[k] || row.lostUpdates[k];
                  return `${id} ${row.acqPerSec[k]}/s${trouble ? ` (failed ${row.failed[k]}, lost ${row.lostUpdates[k]})` : ''}`;
                })
                .join(', '),
          );
        }
        const paired: PairedContention = {
          csMs,
          rounds: c.pairedRounds,
          durationMs: c.pairedMs,
          rows: [...rows.values()],
        };
        out.push(paired);
        for (const id of oursHere) {
          for (const ref of references.filter(present)) {
            const ratio = pairedContentionRatio(paired, id, ref);
            log(
              `  ${id} cs=${csMs}ms vs ${ref}, median (min–max) of ${ratio?.rounds ?? 0} rounds: ` +
                (ratio ? `acq/s ${ratio.median} (${ratio.min}–${ratio.max})` : 'no clean round'),
            );
          }
        }
      }
      // Libraries no later length uses stop now: fewer idle processes during the next rounds.
      for (const [id, { workers }] of running) {
        if ((lastUse.get(id) ?? -1) > i) continue;
        running.delete(id);
        await stopAll(workers);
      }
    }
    log(`  paired contention: ${Math.round((Date.now() - started) / 1000)} s, worker start-up included`);
    return out;
  } finally {
    await stopAll(spawned.map((s) => s.workers).flat());
    await counter.quit();
  }
}
