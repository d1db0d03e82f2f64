/*
 * `npm run bench` — every library side by side on ONE Redis in ONE run (see docs/BENCHMARKS.md).
 *   --quick              ~1-minute smoke run (writes bench/results/quick.json unless --out is given)
 *   --only=a,b           only these libraries (ids in bench/adapters/index.ts)
 *   --fair               also run this library with `fair: true` (already part of a run without --only:
 *                        one of the targets is about it)
 *   --registry           also run this library with `inspection: false` (part of a run without --only:
 *                        the registry-overhead targets compare the two)
 *   --parts=locks,scale,flood,http   which parts to run (default all)
 *   --http-rounds=N      HTTP part: alternating rounds (default in bench/config.ts)
 *   --http-requests=N    HTTP part: requests per app, stock and round (default in bench/config.ts)
 *   --before=DIR         also run an earlier release of this library: DIR is its lib/ folder (e.g. from
 *                        `git worktree add`), loaded with this checkout's node_modules; rows "before (…)"
 *   --out=FILE           JSON results (default bench/results/latest.json)
 *   --chart=FILE         contention chart SVG (default next to the JSON)
 * REDIS_URL=redis://…   use that Redis instead of starting one (only keys containing "bench:" are touched).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import {
  BEFORE_IDS,
  EXTRA_IDS,
  FAIR,
  isLibraryId,
  LIBRARY_IDS,
  NO_REGISTRY,
  OURS,
  OURS_LEASE,
  RAW,
  UNCONTENDED_ONLY,
  type LibraryId,
} from './adapters';
import { FULL, QUICK, type BenchProfile } from './config';
import { RedisTarget } from './redis-target';
import { contentionChart } from './report/svg-chart';
import { renderTables } from './report/tables';
import { evaluateTargets } from './report/targets';
import type { BenchResults } from './report/results';
import { runHttp } from './scenarios/http';
import { meanFloor, runCriticalSectionFloor, type FloorFigures } from './scenarios/critical-section-floor';
import { runContentionSuite, runUncontendedRounds } from './scenarios/lock-suite';
import { pairedReferences, runPairedContention } from './scenarios/paired-contention';
import { runFlood } from './scenarios/flood';
import { runScale } from './scenarios/scale';

function flag(name: string): string | undefined {
  const hit = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  return hit === undefined ? undefined : (hit.split('=')[1] ?? '');
}

function cpuModel(): string {
  try {
    return (
      /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ??
      cpus()[0]?.model ??
      '?'
    );
  } catch {
    return cpus()[0]?.model ?? '?';
  }
}

/** `--name=N` as a positive integer, or `fallback` when the flag is absent. */
function countFlag(name: string, fallback: number): number {
  const raw = flag(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new RangeError(`--${name}: expected a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

async function main(): Promise<void> {
  const base = flag('quick') !== undefined ? QUICK : FULL;
  const profile: BenchProfile = {
    ...base,
    http: {
      ...base.http,
      rounds: countFlag('http-rounds', base.http.rounds),
      requests: countFlag('http-requests', base.http.requests),
    },
  };
  const only = flag('only')?.split(',').filter(Boolean);
  for (const id of only ?? [])
    if (!isLibraryId(id))
      throw new Error(`--only: unknown library "${id}" (known: ${LIBRARY_IDS.join(', ')})`);
  const ids: LibraryId[] = only ? (only as LibraryId[]) : [...LIBRARY_IDS];
  // Without --only: our fair lock, Nest service and no-registry rows too (right after our own rows).
  if (!only) ids.splice(2, 0, ...EXTRA_IDS.filter((id) => !BEFORE_IDS.includes(id)));
  const before = flag('before');
  if (before) {
    process.env.BENCH_BEFORE_LIB = resolve(before);
    ids.splice(2, 0, ...BEFORE_IDS.filter((id) => !ids.includes(id)));
  }
  if (flag('fair') !== undefined && !ids.includes(FAIR)) ids.splice(1, 0, FAIR);
  // The registry's overhead: this library with and without it, in the same run.
  if (flag('registry') !== undefined && !ids.includes(NO_REGISTRY)) ids.splice(1, 0, NO_REGISTRY);
  const parts = new Set((flag('parts') ?? 'locks,scale,flood,http').split(','));
  const out = resolve(flag('out') || `bench/results/${profile.name === 'quick' ? 'quick' : 'latest'}.json`);
  const chart = resolve(flag('chart') || out.replace(/\.json$/, '.svg'));
  const log = (line: string) => console.log(line);
  const started = Date.now();
  const loadAvgAtStart = loadavg().map((v) => Math.round(v * 100) / 100);

  const target = await RedisTarget.open();
  log(
    `Redis ${target.version} at ${target.url}${target.owned ? ' (started by the bench)' : ' (REDIS_URL)'}; profile ${profile.name}`,
  );
  const results: BenchResults = {
    meta: {
      date: new Date(started).toISOString(),
      profile: profile.name,
      command: `npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
      machine: {
        nproc: cpus().length,
        cpuModel: cpuModel(),
        node: process.version,
        redis: target.version,
        loadAvgAtStart,
        loadAvgAtEnd: [],
      },
      redis: {
        url: target.owned ? '(own redis-server on a free port)' : 'REDIS_URL',
        startedByBench: target.owned,
      },
      waitMs: profile.waitMs,
      contention: {
        processes: profile.contention.processes,
        callersPerProcess: profile.contention.callersPerProcess,
        durationMs: profile.contention.durationMs,
        target: profile.contention.target,
      },
      durationSec: 0,
    },
    libraries: [],
    targets: [],
    skipped: [],
  };
  try {
    let floorBefore: FloorFigures[] = [];
    if (parts.has('locks')) {
      floorBefore = await runCriticalSectionFloor(target, profile);
      log('\n[uncontended] every library, trials round-robin');
      const uncontended = await runUncontendedRounds(ids, target, profile, log, {
        raw: RAW,
        ours: [OURS, OURS_LEASE],
      });
      for (const id of ids) {
        if (UNCONTENDED_ONLY.includes(id)) {
          const u = uncontended.get(id);
          if (u) results.libraries.push({ id, name: u.name, uncontended: u.uncontended, contention: [] });
          continue;
        }
        log(`\n[contention] ${id}`);
        try {
          const { name, contention } = await runContentionSuite(id, target, profile, log);
          results.libraries.push({
            id,
            name,
            uncontended: uncontended.get(id)?.uncontended ?? [],
            contention,
          });
        } catch (err) {
          const reason = err instanceof Error ? err.message.split('\n')[0]! : String(err);
          log(`  not measured: ${reason}`);
          results.skipped.push({ id, reason });
        }
      }
    }
    if (parts.has('locks')) {
      // Measured before and after the libraries; the mean is kept (Redis CPU per command drifts on a shared machine).
      const floorAfter = await runCriticalSectionFloor(target, profile);
      results.floor = floorAfter.map((after, i) => meanFloor(floorBefore[i]!, after));
      log(
        `\n[floor] critical section alone: ${results.floor.map((f) => `cs=${f.csMs}ms ${f.acqPerSec} acq/s, ${f.cpuUsPerAcq} µs Redis CPU/acq (${f.runs?.join(' / ')})`).join(', ')}`,
      );
      // Issue 46's contention rows, paired, against the peers the round-robin part found fastest.
      try {
        results.contentionPaired = await runPairedContention(
          target,
          profile,
          log,
          [OURS, OURS_LEASE].filter((id) =>
            results.libraries.some((l) => l.id === id && l.contention.length),
          ),
          (csMs) => pairedReferences(results.libraries, csMs, profile.contention.pairedPeers),
        );
      } catch (err) {
        log(
          `  paired contention not measured: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
        );
      }
    }
    if (parts.has('scale')) {
      log('\n[scale] nestjs-distributed-lock');
      results.scale = await runScale(target, profile, log);
    }
    if (parts.has('flood')) {
      log('\n[flood] nestjs-distributed-lock: waiters on one key in one process');
      results.flood = await runFlood(target, profile, log);
    }
    if (parts.has('http')) {
      log('\n[http] seckill route under autocannon, alternating rounds');
      results.http = await runHttp(target, profile, log);
    }
  } finally {
    await target.clean().catch(() => undefined);
    await target.close();
  }
  results.targets = evaluateTargets(results);
  results.meta.machine.loadAvgAtEnd = loadavg().map((v) => Math.round(v * 100) / 100);
  results.meta.durationSec = Math.round((Date.now() - started) / 1000);

  log(`\n${renderTables(results)}\n`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  if (results.libraries.length) writeFileSync(chart, contentionChart(results));
  const misses = results.targets.filter((t) => !t.pass).length;
  log(`Results: ${out}${results.libraries.length ? `, chart: ${chart}` : ''}`);
  log(
    `${results.targets.length - misses} target(s) PASS, ${misses} MISS; ${results.meta.durationSec} s in all.`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
