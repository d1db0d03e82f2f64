#!/usr/bin/env node
// `npm test`: the whole suite in three stages, arranged by what each part waits on (docs/TESTING.md).
//
//   1. test:parallel   the unit and redis projects, four Jest workers: CPU-bound on two cores
//   2. side by side    the faults project (two files at a time) and test:packed (build, pack, Nest 11
//                      and Nest 12 on the tarball). The fault specs mostly wait on leases, kills and
//                      failovers (a third of the CPU); test:packed is mostly CPU. Each one's output is
//                      printed whole when it ends, so the two never interleave.
//   3. the timing project (test/faults/timing/) in band, with nothing else running: its assertions are
//      about timers and CPU shares.
//
// Any failure fails the run; stage 2 reports both halves before it stops.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timings = [];

/** Runs one command; its output is inherited, or captured and printed whole when it ends. */
function run(label, args, { capture = false } = {}) {
  const started = Date.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      timings.push(`${label}: ${seconds} s`);
      if (capture) process.stdout.write(`\n[test] ${label} (${seconds} s):\n${output}`);
      resolve(code === 0 ? null : `${label} (exit ${code})`);
    });
  });
}

function stop(failures) {
  console.error(`\n[test] FAILED: ${failures.join(', ')}\n  ${timings.join('\n  ')}`);
  process.exit(1);
}

async function main() {
  console.log('[test] 1/3 unit and redis projects (test:parallel)');
  let failure = await run('unit + redis', [jest, '--selectProjects', 'unit', 'redis']);
  if (failure) stop([failure]);

  console.log('\n[test] 2/3 the faults project and test:packed, side by side (output when each ends)');
  const failures = (
    await Promise.all([
      run('faults', [jest, '--selectProjects', 'faults', '--maxWorkers=2', '--testTimeout=120000'], {
        capture: true,
      }),
      run('packed', [path.join(root, 'scripts', 'test-packed.cjs')], { capture: true }),
    ])
  ).filter(Boolean);
  if (failures.length > 0) stop(failures);

  console.log('\n[test] 3/3 the timing project, in band, alone');
  failure = await run('timing', [jest, '--selectProjects', 'timing', '--runInBand', '--testTimeout=120000']);
  if (failure) stop([failure]);
  console.log(`\n[test] all passed\n  ${timings.join('\n  ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
