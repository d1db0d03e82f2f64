#!/usr/bin/env node
// `npm run test:packed` (part of `npm test`): the library as users get it — built, packed, installed
// from the tarball — on Nest 11 and on Nest 12, loaded as CommonJS and as ES modules.
//   1. npm run build, npm pack → a temp dir (exactly the files a user downloads)
// Everything it runs lives in test/packaging/:
//   2. nest11/: the tarball unpacked into its node_modules (Nest 11 from the root node_modules):
//        dual-load.test.mjs   require() and import in one process give the same classes
//        jest-cjs.test.cjs    Jest's CommonJS runtime (what Nest 11 apps' tests use)
//        types/               the .d.ts / .d.mts / .d.cts under node10, node16, nodenext and bundler, skipLibCheck off
//      and packed/ (the Jest project `packed`): the tarball with its optional peers blocked
//   3. nest12/ (an ESM-only Nest 12 app): npm ci when stale, the tarball installed with --no-save;
//        node:test smoke, Jest in ESM mode, Vitest, and its types under node16 and nodenext
//   4. the Nest-layer and e2e specs of the repository on Nest 12 and the packed build
//      (the Jest project `nest12`, Jest in ESM mode; nest12-suite/ redirects the imports)
// Writes nothing tracked: dist/ and test/packaging/*/node_modules are ignored.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const packageDir = path.join(root, 'test', 'packaging', 'nest11');
const nest12Dir = path.join(root, 'test', 'packaging', 'nest12');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timings = [];

function run(label, command, args, cwd, { capture = false } = {}) {
  console.log(`\n[test-packed] ${label}: ${path.relative(root, cwd) || '.'}$ ${command} ${args.join(' ')}`);
  const started = Date.now();
  const result = spawnSync(command, args, {
    cwd,
    stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    encoding: 'utf8',
  });
  timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`[test-packed] FAILED: ${label} (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
  return result.stdout;
}

function node(label, args, cwd) {
  return run(label, process.execPath, args, cwd);
}

/** npm ci only when node_modules does not match the lock file (it is ~25 s on a 2-core machine). */
function npmCiIfStale(dir) {
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  const lock = path.join(dir, 'package-lock.json');
  const fresh =
    fs.existsSync(installed) &&
    fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs &&
    fs.existsSync(path.join(dir, 'node_modules', '@nestjs', 'core'));
  if (!fresh) run('npm ci (test/packaging/nest12)', npm, ['ci', '--no-audit', '--no-fund'], dir);
}

const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-distributed-lock-pack-'));
try {
  run('build', npm, ['run', 'build'], root);
  const packed = JSON.parse(
    run('pack', npm, ['pack', '--json', '--pack-destination', packDir], root, { capture: true }),
  );
  const tarball = path.join(packDir, packed[0].filename);

  const unpacked = path.join(packageDir, 'node_modules', 'nestjs-distributed-lock');
  fs.rmSync(unpacked, { recursive: true, force: true });
  fs.mkdirSync(unpacked, { recursive: true });
  run(
    'unpack (test/packaging/nest11)',
    'tar',
    ['xzf', tarball, '-C', unpacked, '--strip-components=1'],
    root,
  );
  node(
    'Nest 11: require and import in one process',
    ['--test', '--test-reporter=spec', 'dual-load.test.mjs'],
    packageDir,
  );
  node('Nest 11: Jest CommonJS runtime', [jest, '-c', 'jest.config.cjs'], packageDir);
  for (const mode of ['node10', 'node16', 'nodenext', 'bundler']) {
    node(`Nest 11: types (${mode})`, [tsc, '-p', `types/tsconfig.${mode}.json`], packageDir);
  }
  // The tarball alone, its optional peers blocked: it loads, locks and names a missing peer.
  process.env.PACKED_PACKAGE_DIR = unpacked;
  node('without optional peers', [jest, '--selectProjects', 'packed'], root);
  delete process.env.PACKED_PACKAGE_DIR;

  npmCiIfStale(nest12Dir);
  run(
    'install tarball (test/packaging/nest12)',
    npm,
    ['install', '--no-save', '--no-audit', '--no-fund', tarball],
    nest12Dir,
  );
  node('Nest 12: node:test smoke', ['--test', '--test-reporter=spec', 'smoke.test.mjs'], nest12Dir);
  node(
    'Nest 12 app: Jest (ESM mode)',
    ['--experimental-vm-modules', path.join('node_modules', 'jest', 'bin', 'jest.js')],
    nest12Dir,
  );
  node('Nest 12 app: Vitest', [path.join('node_modules', 'vitest', 'vitest.mjs'), 'run'], nest12Dir);
  for (const mode of ['node16', 'nodenext']) {
    node(`Nest 12: types (${mode}, ESM consumer)`, [tsc, '-p', `types/tsconfig.${mode}.json`], nest12Dir);
  }

  node(
    'Nest 12: Nest-layer and e2e specs',
    ['--experimental-vm-modules', jest, '--selectProjects', 'nest12'],
    root,
  );
} finally {
  fs.rmSync(packDir, { recursive: true, force: true });
}
console.log(`\n[test-packed] all passed\n  ${timings.join('\n  ')}`);
