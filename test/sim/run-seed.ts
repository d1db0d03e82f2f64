import { check, type Verdict } from './checker';
import type { History } from './history';
import { PLANTS, type Plant, type PlantName } from './plants';
import { drawScenario, World, type Scenario } from './world';

/** The outcome of one seed. */
export interface SeedResult {
  readonly seed: number;
  readonly scenario: Scenario;
  readonly verdict: Verdict;
  readonly history: History;
  /** Events the simulation ran, and virtual ms simulated. */
  readonly steps: number;
  readonly virtualMs: number;
}

/** Unhandled rejections of the run in progress (the runner installs one listener for all seeds). */
let unhandled: string[] | undefined;
let listening = false;

/**
 * Runs one seed: draws its scenario, builds its world (with a planted bug when `plant` is given),
 * runs it in virtual time, then checks what is left after close() and judges the history.
 */
export async function runSeed(
  seed: number,
  options: { trace?: boolean; plant?: PlantName } = {},
): Promise<SeedResult> {
  if (!listening) {
    listening = true;
    process.on('unhandledRejection', (reason) => {
      (unhandled ??= []).push(
        `unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`,
      );
    });
  }
  unhandled = [];
  const scenario = drawScenario(seed);
  const plant = options.plant ? (PLANTS[options.plant] as Plant) : undefined;
  const undo = plant?.patch?.();
  const world = new World(scenario, options.trace === true, plant?.hooks ?? {});
  let history: History;
  try {
    history = await world.run();
  } finally {
    undo?.();
  }
  // Let a last turn of the real event loop report a rejection nobody handled.
  await new Promise((resolve) => setImmediate(resolve));
  const leftovers: string[] = [...unhandled];
  world.engines.forEach((engine, i) => {
    const stats = engine.stats();
    const name = world.processes[i]!.name;
    if (!stats.closed) leftovers.push(`close: ${name}'s engine is not closed`);
    if (stats.held > 0 || stats.watchdog > 0 || stats.waitingLocks > 0 || stats.channels > 0) {
      leftovers.push(`close: ${name} left ${JSON.stringify(stats)} after close()`);
    }
    if (engine.runtime.deadlines.size > 0) {
      leftovers.push(
        `close: ${name} left ${engine.runtime.deadlines.size} deadlines scheduled after close()`,
      );
    }
  });
  if (world.callsInFlight > 0) leftovers.push(`close: ${world.callsInFlight} calls never settled`);
  const verdict = check(history, scenario, leftovers);
  return { seed, scenario, verdict, history, steps: world.sim.steps, virtualMs: world.sim.now };
}
