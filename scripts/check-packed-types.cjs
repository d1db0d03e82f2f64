#!/usr/bin/env node
// `npm run check:packed-types`: the packed declarations (.d.ts, .d.mts, .d.cts) compile in the apps users
// write, skipLibCheck off: test/packaging/nest11/types/ under nodenext, node10, node16 and bundler (a
// CommonJS Nest 11 app), test/packaging/nest12/types/ under nodenext and node16 (an ES module Nest 12 app).
// A static check, like `npm run typecheck`: it runs on the tarball that `npm run test:packed` (part of
// `npm run test:packaging`) installed into both apps, as publint and attw run on its build (.ci/run, after
// test:packaging). The two apps are checked side by side, one process each (two cores;
// scripts/type-check.cjs: one compiler start-up for each app's resolutions).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const typeCheck = path.join(root, 'scripts', 'type-check.cjs');
const APPS = [
  {
    label: 'Nest 11 (CommonJS app)',
    dir: path.join(root, 'test', 'packaging', 'nest11'),
    // nodenext first: its program holds both consumers (.cts and .mts), so every declaration file the
    // others load is checked in full there (scripts/type-check.cjs).
    modes: ['nodenext', 'node10', 'node16', 'bundler'],
  },
  {
    label: 'Nest 12 (ES module app)',
    dir: path.join(root, 'test', 'packaging', 'nest12'),
    modes: ['nodenext', 'node16'],
  },
];

function check({ label, dir, modes }) {
  const installed = path.join(dir, 'node_modules', 'nestjs-distributed-lock', 'package.json');
  if (!fs.existsSync(installed)) {
    return Promise.resolve(
      `${label}: the packed package is not installed in ${path.relative(root, dir)}/node_modules: ` +
        'run `npm run test:packed` (or `npm test`) first',
    );
  }
  const projects = modes.map((mode) => `types/tsconfig.${mode}.json`);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [typeCheck, ...projects], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      console.log(
        `[packed types] ${label} (${seconds} s): ${path.relative(root, dir)}$ type-check ${projects.join(' ')}\n${output}`,
      );
      resolve(code === 0 ? null : `${label} (exit ${code})`);
    });
  });
}

Promise.all(APPS.map(check)).then((results) => {
  const failures = results.filter(Boolean);
  if (failures.length > 0) {
    console.error(`[packed types] FAILED: ${failures.join('; ')}`);
    process.exit(1);
  }
});
