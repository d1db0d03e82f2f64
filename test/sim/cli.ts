// `npm run sim`: the deterministic simulator (docs/TEST-SUITE.md, "The simulator").
//
//   npm run sim -- --seeds 1000 [--from 1] [--jobs 2]   run seeds 1..1000 on two processes, report failures
//   SIM_SEED=1234 npm run sim                          replay one seed and print its trace
//   npm run sim -- --plants [--seeds 2000]             each planted bug: seeds until the checker catches it
//   npm run sim -- --plant no-drift --seeds 500        one planted bug
import { fork } from 'node:child_process';
import { cpus } from 'node:os';
import { PLANTS, type PlantName } from './plants';
import { runSeed, type SeedResult } from './run-seed';

interface Args {
  seeds: number;
  from: number;
  jobs: number;
  plant?: PlantName;
  plants: boolean;
  worker: boolean;
  stopOnFailure: boolean;
}

function parse(argv: readonly string[]): Args {
  const args: Args = {
    seeds: 200,
    from: 1,
    jobs: Math.min(2, cpus().length),
    plants: false,
    worker: false,
    stopOnFailure: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--seeds') args.seeds = Number(value());
    else if (flag === '--from') args.from = Number(value());
    else if (flag === '--jobs') args.jobs = Number(value());
    else if (flag === '--plant') args.plant = value() as PlantName;
    else if (flag === '--plants') args.plants = true;
    else if (flag === '--worker') args.worker = true;
    else if (flag === '--stop-on-failure') args.stopOnFailure = true;
    else throw new Error(`unknown flag ${flag}`);
  }
  if (args.plant !== undefined && !(args.plant in PLANTS)) {
    throw new Error(`unknown plant ${args.plant}; known: ${Object.keys(PLANTS).join(', ')}`);
  }
  return args;
}

function describe(result: SeedResult): string {
  const s = result.scenario;
  return `${s.topology}, ${s.processes} processes × ${s.callers} callers, ${s.keyClasses.join('/')}`;
}

/** What a worker tells its parent: a seed that failed, or that it ran one (and is ready for more). */
interface WorkerMessage {
  failed?: Failure;
  ran?: { steps: number; virtualMs: number; stop: boolean };
}

/** A worker: runs each seed its parent sends, reports each failing one, then that it ran it. */
function worker(args: Args): void {
  // No stack traces in a worker: a history makes thousands of errors (every busy answer, timeout and
  // refused script is one) and V8 captures a stack for each, 5 % of a worker's CPU. Nothing reads them
  // but the report of an unhandled rejection, which then names the error without its frames; the
  // replay (SIM_SEED, not a worker) keeps them.
  Error.stackTraceLimit = 0;
  const queue: number[] = [];
  let busy = false;
  const runQueued = async (): Promise<void> => {
    busy = true;
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      const result = await runSeed(seed, { plant: args.plant });
      const failed = await failureOf(result, args.plant);
      if (failed) process.send!({ failed } satisfies WorkerMessage);
      const { steps, virtualMs } = result;
      const stop = failed !== undefined && args.stopOnFailure;
      process.send!({ ran: { steps, virtualMs, stop } } satisfies WorkerMessage);
    }
    busy = false;
  };
  process.on('message', (m: { seed?: number; end?: boolean }) => {
    // The parent has every report when it says end: nothing is left to send.
    if (m.end) process.disconnect();
    else if (m.seed !== undefined) {
      queue.push(m.seed);
      // A seed that throws ends the worker (and the run): runSeed's own listener would swallow it.
      if (!busy)
        runQueued().catch((err: unknown) => {
          console.error(err);
          process.exit(1);
        });
    }
  });
}

/** A seed's failure as the parent reports it; with a plant, only problems the seed lacks without it. */
async function failureOf(result: SeedResult, plant?: PlantName): Promise<Failure | undefined> {
  if (result.verdict.ok) return undefined;
  let problems = result.verdict.problems;
  if (plant) {
    // A planted bug counts as caught only by a problem the same seed does not show without it.
    const clean = new Set((await runSeed(result.seed)).verdict.problems);
    problems = problems.filter((p) => !clean.has(p));
    if (problems.length === 0) return undefined;
  }
  return { seed: result.seed, scenario: describe(result), problems: problems.slice(0, 5) };
}

/**
 * V8 flags of the workers. A history lives until the checker has read it, so each scavenge copies what
 * survived since the last one: the fewer scavenges per history, the less is copied. A 64 MB semi-space
 * from the start (V8 otherwise starts small and, here, never grew it: 100 seeds made 82 scavenges with
 * the maximum alone, 24 with the minimum too) took garbage collection from 7.5-8 % of a worker's CPU
 * profile to 5.1-5.5 % (seeds 31-180); 128 MB to 3.7-4.9 %, for 370 MB of memory instead of 230.
 */
const WORKER_V8_FLAGS = ['--max-semi-space-size=64', '--min-semi-space-size=64'];

interface Failure {
  seed: number;
  scenario: string;
  problems: string[];
}

/**
 * Runs seeds from..from+seeds-1 over `jobs` processes; resolves the failures, in seed order. Seeds go
 * out one at a time, two per worker in flight: a worker that drew long histories (a RedLock run can
 * take a hundred times the events of another) does not leave the other idle at the end.
 */
function runSeeds(
  from: number,
  seeds: number,
  jobs: number,
  plant?: PlantName,
  stopOnFailure = false,
): Promise<{ failures: Failure[]; runs: number; steps: number; virtualMs: number; seconds: number }> {
  const started = Date.now();
  const failures: Failure[] = [];
  let runs = 0;
  let steps = 0;
  let virtualMs = 0;
  let next = from;
  let stopped = false;
  const end = from + seeds;
  const children = Array.from({ length: Math.min(jobs, seeds) }, () => {
    const argv = ['--worker'];
    if (plant) argv.push('--plant', plant);
    if (stopOnFailure) argv.push('--stop-on-failure');
    const child = fork(__filename, argv, { execArgv: [...process.execArgv, ...WORKER_V8_FLAGS] });
    let inFlight = 0;
    const feed = (): void => {
      while (!stopped && inFlight < 2 && next < end) {
        child.send({ seed: next++ });
        inFlight++;
      }
      if (inFlight === 0) child.send({ end: true });
    };
    feed();
    return new Promise<void>((resolve, reject) => {
      child.on('message', (m: WorkerMessage) => {
        if (m.failed) failures.push(m.failed);
        if (m.ran) {
          inFlight--;
          runs++;
          steps += m.ran.steps;
          virtualMs += m.ran.virtualMs;
          if (m.ran.stop) stopped = true;
          feed();
        }
      });
      child.on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`a simulator worker exited with ${code}`)),
      );
    });
  });
  return Promise.all(children).then(() => ({
    failures: failures.sort((a, b) => a.seed - b.seed),
    runs,
    steps,
    virtualMs,
    seconds: (Date.now() - started) / 1000,
  }));
}

async function replay(seed: number, plant?: PlantName): Promise<number> {
  const result = await runSeed(seed, { trace: true, plant });
  const { scenario } = result;
  console.log(
    `seed ${seed}: ${describe(result)}; work until ${scenario.workMs} ms, faults before ${scenario.quietAt} ms`,
  );
  if (plant) console.log(`planted: ${PLANTS[plant].description}`);
  for (const line of result.history.trace) console.log(line);
  const { verdict } = result;
  console.log(
    verdict.ok
      ? `\nseed ${seed}: every check holds`
      : `\nseed ${seed}: ${verdict.problems.length} problem(s):`,
  );
  for (const problem of verdict.problems) console.log(`  - ${problem}`);
  return verdict.ok ? 0 : 1;
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  if (args.worker) {
    worker(args);
    return new Promise<number>(() => undefined); // the worker exits when its parent disconnects
  }
  const replaySeed = process.env.SIM_SEED;
  if (replaySeed !== undefined)
    return replay(Number(replaySeed), args.plant ?? (process.env.SIM_PLANT as PlantName | undefined));
  if (args.plants) {
    // Each plant: seeds from 1 on until the checker catches it (stopping there), or `seeds` ran.
    console.log(`planted bug | seeds to detection | first seed | what the checker said`);
    let missed = 0;
    for (const name of Object.keys(PLANTS) as PlantName[]) {
      const found = await runSeeds(args.from, args.seeds, 1, name, true);
      const first = found.failures[0];
      if (!first) missed++;
      console.log(
        `${name} | ${first ? first.seed - args.from + 1 : `not caught in ${args.seeds}`} | ${first?.seed ?? '—'} | ${first?.problems[0] ?? ''}`,
      );
    }
    return missed === 0 ? 0 : 1;
  }
  const result = await runSeeds(args.from, args.seeds, args.jobs, args.plant);
  const perMinute = Math.round((result.runs / result.seconds) * 60);
  console.log(
    `${result.runs} seeds (${args.from}..${args.from + args.seeds - 1}) in ${result.seconds.toFixed(1)} s on ${args.jobs} ` +
      `processes: ${perMinute} histories a minute, ${(result.virtualMs / result.runs / 1000).toFixed(1)} virtual s and ` +
      `${Math.round(result.steps / result.runs)} events each`,
  );
  for (const f of result.failures) {
    console.log(`\nseed ${f.seed} (${f.scenario}) failed; replay: SIM_SEED=${f.seed} npm run sim`);
    for (const p of f.problems) console.log(`  - ${p}`);
  }
  console.log(
    result.failures.length === 0 ? '\nall seeds passed' : `\n${result.failures.length} seed(s) failed`,
  );
  return result.failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
