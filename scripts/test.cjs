#!/usr/bin/env node
// `npm test`: the suite in four steps, arranged by what each part waits on (docs/TEST-SUITE.md):
//
//   1. the unit and redis projects, four Jest workers (the engine's timing logic in virtual time included)
//   2. the faults project, four files at a time with nothing else running: the fault specs mostly wait on
//      leases, kills and failovers (about 1 core busy of 2 at four files), but some take both cores at
//      moments (10,000 waiters, a Nest app's start) and have bounds of hundreds of milliseconds. Beside
//      the unit and redis projects under nice 10, they starved (churn's 10 s, connection-drop's 401 ms):
//      fresh-clone CI run, 2026-11-29.
//   3. the timing project (test/faults/timing/), its four files at once with nothing else running: its
//      assertions are about real timers (a partition through a proxy, cron ticks), and its specs wait on
//      them (13 s of CPU in 35 s).
//   4. the alone project (test/faults/alone/) in band, with nothing else running: its assertions are
//      about CPU shares (cohort bounds and fairness across processes that keep both cores busy).
//
// `npm run test:packaging` (`node scripts/test.cjs --packaging`; .ci/run runs it after `npm test`): the
// package as users install it: test:packed (build, pack, Nest 11 and Nest 12 on the tarball, the Nest
// 12 suite) followed by test:toolchains (the toolchain matrix, two cells at a time, on the same tarball).
//
// Any failure fails the run; a side-by-side step reports every lane before it stops.
// (Runs 30-34 had the faults project alone, while a notice channel that redis-freeze.spec found still
// subscribed was taken for a leak: it was the spec helper reading Redis twice. docs/TEST-SUITE.md.)
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timings = [];
const startedAt = Date.now();
// test:packed's tarball, handed on to the toolchain matrix (one build and pack for both).
const tarball = path.join(os.tmpdir(), `nestjs-distributed-lock-npm-test-${process.pid}.tgz`);

/** Runs one command, or a lane of commands one after the other (up to the first that fails). */
async function runLane(commands, capture, portBlockOffset) {
  for (const command of commands) {
    const failed = await run(command, capture, portBlockOffset);
    if (failed) return failed;
  }
  return null;
}

/** Runs one command; its output is inherited, or captured and printed whole when it ends. Resolves null, or what failed. */
function run([label, args, env = {}], capture, portBlockOffset = 0) {
  const started = Date.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    // Jest numbers its workers from 1 in every run, and test/support/free-port.ts gives each worker
    // number a block of ports: runs side by side take blocks apart, or a port one run found free
    // could be a Redis of the other (faults/lifecycle.spec's "Redis down" port was, once).
    env: { ...process.env, ...env, TEST_PORT_BLOCK_OFFSET: String(portBlockOffset) },
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

/**
 * The steps, in order. A step is a list of lanes run side by side; a lane runs its commands one after the
 * other. The first failing step ends the run.
 */
const SUITE = [
  [[['unit + redis', [jest, '--selectProjects', 'unit', 'redis']]]],
  [
    [
      [
        'faults (four at a time)',
        [jest, '--selectProjects', 'faults', '--maxWorkers=4', '--testTimeout=120000'],
      ],
    ],
  ],
  [
    [
      [
        'timing (four at a time)',
        [jest, '--selectProjects', 'timing', '--maxWorkers=4', '--testTimeout=120000'],
      ],
    ],
  ],
  [[['alone (in band)', [jest, '--selectProjects', 'alone', '--runInBand', '--testTimeout=120000']]]],
];

/** `--packaging`: the packed build on Nest 11 and 12, then the toolchain matrix on the same tarball. */
const PACKAGING = [
  [
    [
      ['packed', [path.join(root, 'scripts', 'test-packed.cjs')], { PACKED_TARBALL_COPY: tarball }],
      ['toolchains', [path.join(root, 'scripts', 'test-toolchains.cjs'), '--tarball', tarball]],
    ],
  ],
];
const STEPS = process.argv.includes('--packaging') ? PACKAGING : SUITE;

async function main() {
  for (const [index, step] of STEPS.entries()) {
    const side = step.length > 1;
    const labels = step.map((lane) => lane.map(([label]) => label).join(' then ')).join(' and ');
    console.log(
      `\n[test] ${index + 1}/${STEPS.length} ${labels}${side ? ', side by side (output when each ends)' : ''}`,
    );
    const failures = (await Promise.all(step.map((lane, i) => runLane(lane, side, i * 5)))).filter(Boolean);
    if (failures.length > 0) {
      console.error(`\n[test] FAILED: ${failures.join(', ')}\n  ${timings.join('\n  ')}`);
      process.exit(1);
    }
  }
  const total = `total: ${((Date.now() - startedAt) / 1000).toFixed(0)} s`;
  console.log(`\n[test] all passed\n  ${[...timings, total].join('\n  ')}`);
}

process.on('exit', () => fs.rmSync(tarball, { force: true }));

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
