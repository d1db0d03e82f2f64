import * as fs from 'fs';
import * as path from 'path';
import { execFileSync } from 'child_process';
import * as os from 'os';
import { REDIS_SERVER_BIN } from './redis-server';

/*
 * Figures measured by the fault suite (recovery times, double-holder windows, leaked handles...).
 * Each spec records its own scenarios (specs that aggregate several tests do it in an afterAll);
 * every record is merged into .results/faults/latest.json (ignored by git, so that running the tests
 * leaves the tree clean); `npm run figures:copy` copies it to docs/figures/ when docs/RELIABILITY.md
 * is updated from a run. Nothing here asserts a time: the figures are reported, the specs assert behaviour.
 */

/**
 * Where the merged figures of the last run of each scenario are kept. The server matrix
 * (scripts/test-servers.cjs) names a file per server, so its runs leave Redis 7.0's figures alone.
 */
export const RESULTS_FILE = path.resolve(
  __dirname,
  '..',
  '..',
  '.results',
  'faults',
  process.env.FAULT_FIGURES_FILE ?? 'latest.json',
);

interface ResultsFile {
  command: string;
  environment: Record<string, unknown>;
  scenarios: Record<string, Record<string, unknown>>;
}

/**
 * Records the figures of scenarios into RESULTS_FILE. Each record is merged into the file at once
 * (synchronously), so records made in a spec's own afterAll hooks are kept too; test files run
 * one at a time in this suite (maxWorkers 1), so there is no concurrent writer.
 */
export function faultFigures(): { record(scenario: string, figures: Record<string, unknown>): void } {
  return {
    record(scenario, figures) {
      let file: ResultsFile = { command: 'npm run test:faults', environment: {}, scenarios: {} };
      try {
        file = JSON.parse(fs.readFileSync(RESULTS_FILE, 'utf8')) as ResultsFile;
      } catch {
        // first run: start a new file
      }
      file.environment = environment();
      file.scenarios[scenario] = { ...figures, measuredAt: new Date().toISOString() };
      const ordered = Object.entries(file.scenarios).sort(
        ([a], [b]) => scenarioOrder(a) - scenarioOrder(b) || a.localeCompare(b),
      );
      file.scenarios = Object.fromEntries(ordered);
      fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
      fs.writeFileSync(RESULTS_FILE, JSON.stringify(file, null, 2) + '\n');
    },
  };
}

function scenarioOrder(id: string): number {
  const n = Number.parseInt(id, 10);
  return Number.isNaN(n) ? 1000 : n;
}

function environment(): Record<string, unknown> {
  let redis = 'unknown';
  try {
    redis =
      execFileSync(REDIS_SERVER_BIN, ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? redis;
  } catch {
    // reported as unknown
  }
  return {
    node: process.version,
    redis,
    cpus: os.cpus().length,
    platform: `${os.platform()} ${os.release()}`,
  };
}
