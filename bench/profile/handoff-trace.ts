/*
 * Where the time of a contended acquisition goes (issue 46): the bench's contention loop (GET → cs →
 * SET on a counter, one key) with this library only, P processes × C callers, every grant and release
 * stamped on the machine-wide monotonic clock (process.hrtime, CLOCK_MONOTONIC: comparable across
 * processes). The lock is exclusive, so the run is a sequence of holds and gaps; each gap (from a
 * holder's release() call to the next holder's acquire() answer) is put in one of three classes:
 *   hand-off   the next holder is of the same process and got the lock without Redis (cohort);
 *   local      the same process, through Redis (a cohort ended, its own head won in Redis);
 *   transfer   another process (release in Redis → publish → wake → attempt → grant).
 * The holds plus the gaps are the whole run, so the table says where every millisecond went.
 * Also per acquisition: Redis commands by name (INFO commandstats), client CPU, Redis CPU.
 *   node -r ts-node/register/transpile-only bench/profile/handoff-trace.ts \
 *     [--processes=4] [--callers=8] [--cs=0] [--ms=6000] [--lease=10000] [--lib=DIR] [--passes=N] [--budget=MS] [--json]
 *     [--before=DIR --rounds=6] [--sweep=passes:16,32,64 --rounds=4] [--floor]
 * --before=DIR: paired rounds of the tree at DIR (its lib/) and this one (or --lib), alternating, one
 * Redis; prints each round and the medians (issue 46's before/after). --sweep=passes:16,32,64 (or
 * budget:50,100): each value of one cohort bound once per round, rotated; medians of throughput and
 * fairness per value (issue 46's throughput-against-bound curve).
 * --lib=DIR: another copy of lib/ (before/after); --passes, --budget: the cohort bounds (engine options
 * `cohort.passes` and `cohort.budgetMs`, default the engine's); --prof=DIR: a CPU profile of each process over the measured
 * part only (node:inspector; NODE_OPTIONS may not carry --cpu-prof), DIR/trace-<i>.cpuprofile, and
 * its holds (DIR/trace-<i>.holds.json), to tell its work while it holds from its work while it waits.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import Redis from 'ioredis';
import { spawnWorker, type WorkerProcess } from '../../test/support/spawn-worker';
import { RedisTarget } from '../redis-target';

function flag(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  return hit === undefined ? fallback : (hit.split('=')[1] ?? '');
}

/** Microseconds on the machine-wide monotonic clock. */
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** One hold: when acquire() answered, when release() was called and when it answered (µs). */
interface Hold {
  /** µs from the acquire() call to its answer. */
  wait: number;
  acq: number;
  rel: number;
  relDone: number;
  handed: boolean;
}

interface ChildReport {
  type: 'report';
  index: number;
  holds: Hold[];
  cpuUs: number;
  failures: number;
}

/** One run's settings, passed to each child process as JSON (TRACE_CFG). */
interface TraceConfig {
  callers: number;
  csMs: number;
  ms: number;
  leaseMs?: number;
  /** Another copy of lib/ to load the engine from ('' for this tree's). */
  lib: string;
  passes?: number;
  budgetMs?: number;
  /** Folder for the CPU profiles ('' for none). */
  prof: string;
  floor?: boolean;
}

async function child(): Promise<void> {
  const url = process.env.TRACE_REDIS_URL!;
  const index = Number(process.env.TRACE_INDEX);
  const cfg = JSON.parse(process.env.TRACE_CFG!) as TraceConfig;
  const { createLockEngine } = (await import(
    cfg.lib ? `${resolve(cfg.lib)}/core` : '../../lib/core'
  )) as typeof import('../../lib/core');
  const engine: TraceEngine = cfg.floor
    ? floorEngine()
    : createLockEngine({
        redis: url,
        ...((cfg.passes !== undefined || cfg.budgetMs !== undefined) && {
          cohort: {
            ...(cfg.passes !== undefined && { passes: cfg.passes }),
            ...(cfg.budgetMs !== undefined && { budgetMs: cfg.budgetMs }),
          },
        }),
      });
  let handed = false;
  engine.events.on('acquired', (e) => void (handed = e.handedOver === true));
  const counter = new Redis(url);
  const options = { waitMs: 10_000, ...(cfg.leaseMs !== undefined && { leaseMs: cfg.leaseMs }) };
  const warmUntil = performance.now() + 400;
  for (let i = 0; i < 200 || performance.now() < warmUntil; i++)
    await (await engine.acquire(`bench:trace:warmup:${index}`, options)).release();
  await counter.ping();
  process.stdout.write(`${JSON.stringify({ type: 'ready' })}\n`);
  const input = createInterface({ input: process.stdin });
  const startAt = Number((await input[Symbol.asyncIterator]().next()).value);
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  const holds: Hold[] = [];
  let failures = 0;
  const deadline = startAt + cfg.ms;
  const profiler = cfg.prof ? await startProfiler() : undefined;
  const cpu0 = process.cpuUsage();
  const caller = async (): Promise<void> => {
    while (Date.now() < deadline) {
      let handle;
      const asked = nowUs();
      try {
        handle = await engine.acquire('bench:trace:key', options);
      } catch {
        failures++;
        continue;
      }
      const acq = nowUs();
      const hold: Hold = { wait: acq - asked, acq, rel: 0, relDone: 0, handed };
      const value = Number((await counter.get('bench:trace:counter')) ?? 0);
      if (cfg.csMs > 0) await new Promise((r) => setTimeout(r, cfg.csMs));
      await counter.set('bench:trace:counter', value + 1);
      hold.rel = nowUs();
      await handle.release();
      hold.relDone = nowUs();
      holds.push(hold);
    }
  };
  await Promise.all(Array.from({ length: cfg.callers }, caller));
  const cpu = process.cpuUsage(cpu0);
  if (profiler) {
    writeFileSync(join(cfg.prof, `trace-${index}.cpuprofile`), JSON.stringify(await profiler()));
    writeFileSync(join(cfg.prof, `trace-${index}.holds.json`), JSON.stringify(holds));
  }
  const report: ChildReport = { type: 'report', index, holds, cpuUs: cpu.user + cpu.system, failures };
  await Promise.allSettled([engine.close(), counter.quit()]);
  // A pipe is written asynchronously: exit only once the (large) report is out.
  await new Promise((r) => process.stdout.write(`${JSON.stringify(report)}\n`, r));
  process.exit(0);
}

/** What the loop drives: the engine, or the floor's in-process mutex. */
interface TraceEngine {
  readonly events: { on(event: 'acquired', fn: (e: { handedOver?: boolean }) => void): unknown };
  acquire(
    key: string,
    options: { waitMs: number; leaseMs?: number },
  ): Promise<{ release(): Promise<boolean> }>;
  close(): Promise<unknown>;
}

/**
 * --floor: a FIFO mutex inside the process instead of the engine (no Redis lock at all, every grant
 * a "hand-off"): what the loop itself costs in one process, the floor under the engine's figures.
 */
function floorEngine(): TraceEngine {
  let tail = Promise.resolve();
  const listeners: ((e: { handedOver?: boolean }) => void)[] = [];
  return {
    events: { on: (_: 'acquired', fn: (e: { handedOver?: boolean }) => void) => listeners.push(fn) },
    async acquire(_key: string, _options?: object): Promise<{ release(): Promise<boolean> }> {
      let release!: () => void;
      const previous = tail;
      tail = new Promise<void>((r) => (release = r));
      await previous;
      for (const fn of listeners) fn({ handedOver: true });
      return { release: async () => (release(), true) };
    },
    close: async () => undefined,
  };
}

/** Starts V8's CPU profiler in this process; the function returned stops it and gives the profile. */
async function startProfiler(): Promise<() => Promise<object>> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((ok, fail) =>
      session.post(method, params ?? {}, (err, res) => (err ? fail(err) : ok(res))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return async () => ((await post('Profiler.stop')) as { profile: object }).profile;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const r1 = (n: number): number => Math.round(n * 10) / 10;

async function parent(): Promise<void> {
  const processes = Number(flag('processes', '4'));
  const lease = flag('lease', '');
  const passes = flag('passes', '');
  const budget = flag('budget', '');
  const cfg: TraceConfig = {
    callers: Number(flag('callers', '8')),
    csMs: Number(flag('cs', '0')),
    ms: Number(flag('ms', '6000')),
    leaseMs: lease ? Number(lease) : undefined,
    lib: flag('lib', ''),
    passes: passes ? Number(passes) : undefined,
    budgetMs: budget ? Number(budget) : undefined,
    prof: flag('prof', '') && resolve(flag('prof', '')),
    floor: process.argv.includes('--floor'),
  };
  const target = await RedisTarget.open();
  try {
    const before = flag('before', '');
    const sweep = flag('sweep', '');
    if (sweep) return await runSweep(target, cfg, processes, sweep);
    if (!before) {
      print(await traceOnce(target, cfg, processes));
      return;
    }
    // Paired: this tree and the one at --before, alternating (the order flips every round), on one
    // Redis; each round's ratio is taken within the round, so the machine's load drifts out of it.
    const rounds = Number(flag('rounds', '6'));
    const rows: { before: Summary; after: Summary }[] = [];
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
      const pair: Partial<Record<'before' | 'after', Summary>> = {};
      for (const which of order as ('before' | 'after')[]) {
        pair[which] = await traceOnce(
          target,
          { ...cfg, lib: which === 'before' ? before : cfg.lib },
          processes,
        );
        await target.clean();
      }
      rows.push(pair as { before: Summary; after: Summary });
      const { before: b, after: a } = rows[rows.length - 1]!;
      console.log(
        `round ${i + 1}: before ${b.acqPerSec} acq/s (hand-off gap ${b.gaps['hand-off']!.meanUs} µs, ${b.clientCpuUsPerAcq} µs CPU), ` +
          `after ${a.acqPerSec} acq/s (${a.gaps['hand-off']!.meanUs} µs, ${a.clientCpuUsPerAcq} µs CPU): ${Math.round((100 * a.acqPerSec) / b.acqPerSec) / 100}×`,
      );
    }
    const col = (f: (s: Summary) => number) => ({
      before: median(rows.map((r) => f(r.before))),
      after: median(rows.map((r) => f(r.after))),
      ratio: median(rows.map((r) => f(r.after) / f(r.before))),
    });
    const table = {
      config: rows[0]!.after.config,
      rounds,
      'acq/s': col((s) => s.acqPerSec),
      'µs per acquisition': col((s) => s.usPerAcq),
      'hold µs': col((s) => s.holdUs.mean),
      'hand-off gap µs': col((s) => s.gaps['hand-off']!.meanUs),
      'transfer gap µs': col((s) => s.gaps.transfer!.meanUs),
      'local gap µs': col((s) => s.gaps.local!.meanUs),
      'client CPU µs/acq': col((s) => s.clientCpuUsPerAcq),
      'Redis CPU µs/acq': col((s) => s.redisCpuUsPerAcq),
      'Redis cmds/acq': col((s) => s.cmdsPerAcq),
      'wait p99 ms': col((s) => s.waitMs.p99),
      'share dev %': col((s) => s.shareDevPct),
    };
    console.log(`medians over ${rounds} rounds (ratio: median of the per-round after/before):`);
    for (const [name, v] of Object.entries(table)) {
      if (typeof v !== 'object') continue;
      console.log(
        `  ${name.padEnd(20)} before ${r1(v.before)}  after ${r1(v.after)}  ratio ${Math.round(v.ratio * 1000) / 1000}`,
      );
    }
    if (process.argv.includes('--json')) console.log(JSON.stringify({ table, rows }));
  } finally {
    await target.clean().catch(() => undefined);
    await target.close();
  }
}

function median(list: number[]): number {
  const sorted = [...list].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * --sweep=passes:16,32,64 (or budget:50,100): the cohort bound against throughput and fairness, each
 * value once per round in a rotated order, medians over the rounds (issue 46's curve).
 */
async function runSweep(
  target: RedisTarget,
  cfg: TraceConfig,
  processes: number,
  sweep: string,
): Promise<void> {
  const [name, list] = sweep.split(':');
  if ((name !== 'passes' && name !== 'budget') || !list)
    throw new Error('--sweep=passes:A,B,... or budget:A,B,...');
  const values = list.split(',').map(Number);
  const rounds = Number(flag('rounds', '4'));
  const runs = new Map<number, Summary[]>(values.map((v) => [v, []]));
  for (let i = 0; i < rounds; i++) {
    for (let j = 0; j < values.length; j++) {
      const v = values[(i + j) % values.length]!;
      const at = name === 'passes' ? { passes: v } : { budgetMs: v };
      runs.get(v)!.push(await traceOnce(target, { ...cfg, ...at }, processes));
      await target.clean();
    }
    console.log(`round ${i + 1} of ${rounds} done`);
  }
  console.log(
    `${runs.get(values[0]!)![0]!.config.replace(/, (passes|budget) [^,]*/, '')}: medians of ${rounds} rounds`,
  );
  console.log(
    `| ${name} | acq/s | µs/acq | transfers/s | wait p50 ms | wait p99 ms | wait max ms | share dev % | longest run | Redis cmds/acq | client CPU µs/acq |`,
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const v of values) {
    const rs = runs.get(v)!;
    const m = (f: (s: Summary) => number) => r1(median(rs.map(f)));
    console.log(
      `| ${v} | ${m((s) => s.acqPerSec)} | ${m((s) => s.usPerAcq)} | ${m((s) => (s.gaps.transfer!.count * s.acqPerSec) / s.acquisitions)} | ${m((s) => s.waitMs.p50)} | ${m((s) => s.waitMs.p99)} | ${m((s) => s.waitMs.max)} | ${m((s) => s.shareDevPct)} | ${m((s) => s.longestRun)} | ${m((s) => s.cmdsPerAcq)} | ${m((s) => s.clientCpuUsPerAcq)} |`,
    );
  }
}

/** One run: `processes` workers of `cfg` on `target`, to the end; its summary. */
async function traceOnce(target: RedisTarget, cfg: TraceConfig, processes: number): Promise<Summary> {
  const workers: WorkerProcess<{ type: string }>[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      workers.push(
        spawnWorker(__filename, {
          env: {
            TRACE_CHILD: '1',
            TRACE_INDEX: String(i),
            TRACE_REDIS_URL: target.url,
            TRACE_CFG: JSON.stringify(cfg),
          },
        }),
      );
    }
    await Promise.all(workers.map((w) => w.waitForMessage((m) => m.type === 'ready', 60_000)));
    await target.admin.del('bench:trace:counter');
    const startAt = Date.now() + 300;
    for (const w of workers) w.send(startAt);
    await new Promise((r) => setTimeout(r, 300));
    const before = await target.snapshot();
    const reports = await Promise.all(
      workers.map((w) =>
        w.waitForMessage<ChildReport & { type: string }>((m) => m.type === 'report', cfg.ms + 60_000),
      ),
    );
    const after = await target.snapshot();
    await Promise.all(workers.map((w) => w.exited));
    return summarize(reports, RedisTarget.delta(before, after), cfg, processes);
  } finally {
    for (const w of workers) if (w.running) await w.stop();
  }
}

interface Summary {
  config: string;
  acquisitions: number;
  acqPerSec: number;
  perProcess: number[];
  failures: number;
  usPerAcq: number;
  holdUs: { mean: number; p50: number; p99: number };
  /** From the acquire() call to its answer, ms. */
  waitMs: { p50: number; p99: number; max: number };
  /** Largest deviation of a process' share of the acquisitions from an equal share, %. */
  shareDevPct: number;
  gaps: Record<string, { count: number; meanUs: number; p50Us: number; p99Us: number; shareOfTime: number }>;
  releaseCallUs: { handOff: number; redis: number };
  cmdsPerAcq: number;
  cmdsByName: Record<string, number>;
  clientCpuUsPerAcq: number;
  redisCpuUsPerAcq: number;
  longestRun: number;
}

function summarize(
  reports: ChildReport[],
  redis: ReturnType<typeof RedisTarget.delta>,
  cfg: TraceConfig,
  processes: number,
): Summary {
  const all = reports
    .flatMap((r) => r.holds.map((h) => ({ ...h, proc: r.index })))
    .sort((a, b) => a.acq - b.acq);
  const n = all.length;
  const span = n ? all[n - 1]!.relDone - all[0]!.acq : 0;
  const gaps: Record<string, number[]> = { 'hand-off': [], local: [], transfer: [] };
  let longest = 0;
  let run = 0;
  for (let i = 1; i < n; i++) {
    const prev = all[i - 1]!;
    const cur = all[i]!;
    const gap = cur.acq - prev.rel;
    const cls = cur.proc !== prev.proc ? 'transfer' : cur.handed ? 'hand-off' : 'local';
    gaps[cls]!.push(gap);
    run = cur.proc === prev.proc ? run + 1 : 1;
    longest = Math.max(longest, run);
  }
  const holdTimes = all.map((h) => h.rel - h.acq).sort((a, b) => a - b);
  const waits = all.map((h) => h.wait).sort((a, b) => a - b);
  const totalUs = all.length > 1 ? all[n - 1]!.rel - all[0]!.acq : 1;
  const gapStats: Summary['gaps'] = {};
  for (const [cls, list] of Object.entries(gaps)) {
    const sorted = [...list].sort((a, b) => a - b);
    const sum = list.reduce((s, v) => s + v, 0);
    gapStats[cls] = {
      count: list.length,
      meanUs: r1(list.length ? sum / list.length : 0),
      p50Us: r1(pct(sorted, 0.5)),
      p99Us: r1(pct(sorted, 0.99)),
      shareOfTime: r1((100 * sum) / totalUs),
    };
  }
  const relHand = all.filter((h, i) => all[i + 1]?.handed && all[i + 1]!.proc === h.proc);
  const relOther = all.filter((h, i) => !(all[i + 1]?.handed && all[i + 1]!.proc === h.proc));
  const meanOf = (list: typeof all) =>
    r1(list.length ? list.reduce((s, h) => s + (h.relDone - h.rel), 0) / list.length : NaN);
  const cmdsByName: Record<string, number> = {};
  for (const [name, calls] of Object.entries(redis.commands))
    cmdsByName[name] = Math.round((1000 * calls) / n) / 1000;
  return {
    config: `${processes} × ${cfg.callers} callers, cs ${cfg.csMs} ms, ${cfg.leaseMs ? `leaseMs ${cfg.leaseMs}` : 'watchdog'}${cfg.passes !== undefined ? `, passes ${cfg.passes}` : ''}${cfg.budgetMs !== undefined ? `, budget ${cfg.budgetMs} ms` : ''}`,
    acquisitions: n,
    acqPerSec: Math.round((n / span) * 1e6),
    perProcess: reports.map((r) => r.holds.length),
    failures: reports.reduce((s, r) => s + r.failures, 0),
    usPerAcq: r1(span / n),
    holdUs: {
      mean: r1(holdTimes.reduce((s, v) => s + v, 0) / n),
      p50: r1(pct(holdTimes, 0.5)),
      p99: r1(pct(holdTimes, 0.99)),
    },
    gaps: gapStats,
    releaseCallUs: { handOff: meanOf(relHand), redis: meanOf(relOther) },
    cmdsPerAcq: Math.round((100 * redis.totalCommands) / n) / 100,
    cmdsByName,
    clientCpuUsPerAcq: r1(reports.reduce((s, r) => s + r.cpuUs, 0) / n),
    redisCpuUsPerAcq: r1(redis.cpuMicros / n),
    longestRun: longest,
    waitMs: {
      p50: Math.round(pct(waits, 0.5) / 10) / 100,
      p99: Math.round(pct(waits, 0.99) / 10) / 100,
      max: Math.round(waits[waits.length - 1]! / 10) / 100,
    },
    shareDevPct: r1(Math.max(...reports.map((r) => Math.abs((100 * r.holds.length * processes) / n - 100)))),
  };
}

function print(s: Summary): void {
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(s));
    return;
  }
  console.log(`${s.config}: ${s.acquisitions} acquisitions, ${s.acqPerSec} acq/s, ${s.usPerAcq} µs each`);
  console.log(
    `  per process ${s.perProcess.join('/')} (share dev ${s.shareDevPct} %), failures ${s.failures}, longest run ${s.longestRun}`,
  );
  console.log(
    `  wait (acquire() call → answer) p50 ${s.waitMs.p50} ms, p99 ${s.waitMs.p99}, max ${s.waitMs.max}`,
  );
  console.log(
    `  hold (acquire answered → release called) mean ${s.holdUs.mean} µs, p50 ${s.holdUs.p50}, p99 ${s.holdUs.p99}`,
  );
  for (const [cls, g] of Object.entries(s.gaps))
    console.log(
      `  gap ${cls.padEnd(8)} ×${String(g.count).padStart(6)}: mean ${g.meanUs} µs, p50 ${g.p50Us}, p99 ${g.p99Us}; ${g.shareOfTime} % of the time`,
    );
  console.log(
    `  release() call → answer: before a hand-off ${s.releaseCallUs.handOff} µs, otherwise ${s.releaseCallUs.redis} µs`,
  );
  console.log(`  Redis cmds/acq ${s.cmdsPerAcq}: ${JSON.stringify(s.cmdsByName)}`);
  console.log(
    `  client CPU ${s.clientCpuUsPerAcq} µs/acq (all processes), Redis CPU ${s.redisCpuUsPerAcq} µs/acq`,
  );
}

(process.env.TRACE_CHILD ? child() : parent()).catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
