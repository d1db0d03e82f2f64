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

function stop(failures) {
  console.error(`\n[test] FAILED: ${failures.join(', ')}\n  ${timings.join('\n  ')}`);
  process.exit(1);
}

async function main() {
  console.log('[test] 1/4 unit and redis projects (test:parallel)');
  let failure = await run('unit + redis', [jest, '--selectProjects', 'unit', 'redis']);
  if (failure) stop([failure]);

  console.log('\n[test] 2/4 the faults project (two files at a time)');
  failure = await run('faults', [
    jest,
    '--selectProjects',
    'faults',
    '--maxWorkers=2',
    '--testTimeout=120000',
  ]);
  if (failure) stop([failure]);

  console.log('\n[test] 3/4 test:packed');
  failure = await run('packed', [path.join(root, 'scripts', 'test-packed.cjs')]);
  if (failure) stop([failure]);

  console.log('\n[test] 4/4 the timing project, in band, alone');
  failure = await run('timing', [jest, '--selectProjects', 'timing', '--runInBand', '--testTimeout=120000']);
  if (failure) stop([failure]);
  console.log(`\n[test] all passed\n  ${timings.join('\n  ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
