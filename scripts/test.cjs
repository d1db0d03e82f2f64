#!/usr/bin/env node
// `npm test`: the whole suite, one step after another (docs/TESTING.md):
//
//   1. the unit and redis projects, four Jest workers: CPU-bound on two cores
//   2. the faults project, two files at a time
//   3. test:packed (build, pack, Nest 11 and Nest 12 on the tarball)
//   4. the timing project (test/faults/timing/) in band, with nothing else running: its assertions are
//      about timers and CPU shares.
//
// The faults project beside test:packed saves about 50 s, but under that load redis-freeze.spec finds a
// force-release notice channel left subscribed in about one run of four (docs/TESTING.md, runs 23 and
// 29), a leak not understood yet; until it is, the faults project runs alone. The first failure ends
// the run.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timings = [];
const startedAt = Date.now();

/** Runs one command with its output inherited; resolves null, or what failed. */
function run(label, args) {
  const started = Date.now();
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
      resolve(code === 0 ? null : `${label} (exit ${code})`);
    });
  });
}

/** The steps, in order. */
const STEPS = [
  ['unit + redis', [jest, '--selectProjects', 'unit', 'redis']],
  ['faults', [jest, '--selectProjects', 'faults', '--maxWorkers=2', '--testTimeout=120000']],
  ['packed', [path.join(root, 'scripts', 'test-packed.cjs')]],
  ['timing (in band, alone)', [jest, '--selectProjects', 'timing', '--runInBand', '--testTimeout=120000']],
];

async function main() {
  for (const [index, [label, args]] of STEPS.entries()) {
    console.log(`\n[test] ${index + 1}/${STEPS.length} ${label}`);
    const failure = await run(label, args);
    if (failure) {
      console.error(`\n[test] FAILED: ${failure}\n  ${timings.join('\n  ')}`);
      process.exit(1);
    }
  }
  const total = `total: ${((Date.now() - startedAt) / 1000).toFixed(0)} s`;
  console.log(`\n[test] all passed\n  ${[...timings, total].join('\n  ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
