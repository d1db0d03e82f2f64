/*
 * Re-renders a saved run without running anything: the Markdown tables on stdout (targets
 * re-evaluated from the stored measurements) and, with --svg, the contention chart.
 *   node -r ts-node/register/transpile-only bench/render.ts bench/results/latest.json --svg docs/bench-contention.svg
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { contentionChart } from './report/svg-chart';
import { renderTables } from './report/tables';
import { evaluateTargets } from './report/targets';
import type { BenchResults } from './report/results';

const args = process.argv.slice(2);
const input =
  args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--svg') ??
  'bench/results/latest.json';
const svgAt = args.indexOf('--svg');
const results = JSON.parse(readFileSync(input, 'utf8')) as BenchResults;
// Targets are re-evaluated from the measurements, with the current rules.
results.targets = evaluateTargets(results);
console.log(renderTables(results));
if (svgAt >= 0) {
  const output = args[svgAt + 1] ?? 'docs/bench-contention.svg';
  writeFileSync(output, contentionChart(results));
  console.log(`\n${output} written from ${input}`);
}
