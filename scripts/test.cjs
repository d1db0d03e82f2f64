#!/usr/bin/env node
// `npm test`: the whole suite, one step after another (docs/TESTING.md):
//
//   1. the unit and redis projects, four Jest workers: CPU-bound on two cores
//   2. the faults project, two files at a time
//   3. test:packed (build, pack, Nest 11 and Nest 12 on the tarball)
//   4. the timing project (test/faults/timing/) in band, with nothing else running: its assertions are
//      about timers and CPU shares.
//
// The faults project mostly waits (a third of the CPU), and ran beside test:packed for a while: 50 s
// faster, but under that load a force-release notice subscription outlived the registry's drop in 3
// of 6 fresh-clone runs (docs/TESTING.md, runs 10-18). Until that is understood, it runs alone.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timings = [];

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

/** The steps, in order; the first failure ends the run. */
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
  console.log(`\n[test] all passed\n  ${timings.join('\n  ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
