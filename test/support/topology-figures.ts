/**
 * Measured figures of the topology tests, kept in .results/topologies/<file>.json (ignored by git, so
 * that running the tests leaves the tree clean): per scenario the latest run and the last 20 runs
 * (each spec file writes its own file; `npx jest test/topologies` refreshes them). The figures that
 * docs/TOPOLOGIES.md quotes are copied to docs/figures/ on purpose by `npm run figures:copy`.
 */
import * as fs from 'fs';
import * as path from 'path';

const DIR = path.join(__dirname, '..', '..', '.results', 'topologies');
const KEEP = 20;

interface Scenario {
  latest: unknown;
  runs: unknown[];
}

/** Records `figures` as the latest run of scenario `name` in .results/topologies/<file>.json. */
export function recordFigures(file: string, name: string, figures: object): void {
  fs.mkdirSync(DIR, { recursive: true });
  const target = path.join(DIR, `${file}.json`);
  let all: Record<string, Scenario> = {};
  try {
    all = JSON.parse(fs.readFileSync(target, 'utf8')) as Record<string, Scenario>;
  } catch {
    // first run
  }
  const entry = { ...figures, measuredAt: new Date().toISOString() };
  const runs = Array.isArray(all[name]?.runs) ? all[name].runs : [];
  all[name] = { latest: entry, runs: [...runs, entry].slice(-KEEP) };
  fs.writeFileSync(target, JSON.stringify(all, null, 2) + '\n');
}
