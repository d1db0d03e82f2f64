#!/usr/bin/env node
// `npm run test:packed` (part of `npm run test:packaging`): the library as users get it — built, packed, installed
// from the tarball — on Nest 11 and on Nest 12, loaded as CommonJS and as ES modules.
//   1. npm run build, npm pack → a temp dir (exactly the files a user downloads)
// Everything it runs lives in test/packaging/:
//   2. nest11/: the tarball unpacked into its node_modules (Nest 11 from the root node_modules):
//        dual-load.test.mjs   require() and import in one process give the same classes
//        dual-load-service.test.mjs   ... and one service: a lock re-entered across the two, one holder
//        jest-cjs.test.cjs    Jest's CommonJS runtime (what Nest 11 apps' tests use)
//      and packed/ (the Jest project `packed`): the tarball with its optional peers blocked
//   3. nest12/ (an ESM-only Nest 12 app): npm ci when stale, the tarball installed with --no-save;
//        node:test smoke, Jest in ESM mode, Vitest
//   4. the Nest-layer and e2e specs of the repository on Nest 12 and the packed build
//      (the Jest project `nest12`, Jest in ESM mode; nest12-suite/ redirects the imports)
// The two apps' type checks of the packed declarations (nest11/types/, nest12/types/) are not run here:
// `npm run check:packed-types` runs them on what this script installed (.ci/run, after `npm run test:packaging`).
// Writes nothing tracked: dist/ and test/packaging/*/node_modules are ignored.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const packageDir = path.join(root, 'test', 'packaging', 'nest11');
const nest12Dir = path.join(root, 'test', 'packaging', 'nest12');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timings = [];

/** Runs one step in the foreground (its output inherited, or captured and returned); exits on failure. */
async function run(label, command, args, cwd, { capture = false } = {}) {
  console.log(`\n[test-packed] ${label}: ${path.relative(root, cwd) || '.'}$ ${command} ${args.join(' ')}`);
  const started = Date.now();
  const child = spawn(command, args, { cwd, stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit' });
  let stdout = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  const status = await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (status !== 0) {
    console.error(`[test-packed] FAILED: ${label} (exit ${status})`);
    process.exit(status ?? 1);
  }
  return stdout;
}

function node(label, args, cwd) {
  return run(label, process.execPath, args, cwd);
}

/** npm ci only when node_modules does not match the lock file (it is ~25 s on a 2-core machine). */
async function npmCiIfStale(dir) {
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  const lock = path.join(dir, 'package-lock.json');
  const fresh =
    fs.existsSync(installed) &&
    fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs &&
    fs.existsSync(path.join(dir, 'node_modules', '@nestjs', 'core'));
  if (!fresh) await run('npm ci (test/packaging/nest12)', npm, ['ci', '--no-audit', '--no-fund'], dir);
}

async function main() {
  const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-distributed-lock-pack-'));
  // The Nest 12 app's install waits on the network and the disk, not on the build: it starts now and
  // is awaited where the Nest 12 steps begin (a failure is reported there, not as an unhandled one).
  const nest12Install = npmCiIfStale(nest12Dir);
  nest12Install.catch(() => undefined);
  try {
    await run('build', npm, ['run', 'build'], root);
    const packed = JSON.parse(
      await run('pack', npm, ['pack', '--json', '--pack-destination', packDir], root, { capture: true }),
    );
    const tarball = path.join(packDir, packed[0].filename);

    const unpacked = path.join(packageDir, 'node_modules', 'nestjs-distributed-lock');
    fs.rmSync(unpacked, { recursive: true, force: true });
    fs.mkdirSync(unpacked, { recursive: true });
    await run(
      'unpack (test/packaging/nest11)',
      'tar',
      ['xzf', tarball, '-C', unpacked, '--strip-components=1'],
      root,
    );
    // scripts/test.cjs hands the tarball on to the toolchain matrix (scripts/test-toolchains.cjs).
    if (process.env.PACKED_TARBALL_COPY) fs.copyFileSync(tarball, process.env.PACKED_TARBALL_COPY);
    await node(
      'Nest 11: require and import in one process',
      ['--test', '--test-reporter=spec', 'dual-load.test.mjs', 'dual-load-service.test.mjs'],
      packageDir,
    );
    await node('Nest 11: Jest CommonJS runtime', [jest, '-c', 'jest.config.cjs'], packageDir);
    // The tarball alone, its optional peers blocked: it loads, locks and names a missing peer.
    process.env.PACKED_PACKAGE_DIR = unpacked;
    await node('without optional peers', [jest, '--selectProjects', 'packed'], root);
    delete process.env.PACKED_PACKAGE_DIR;

    await nest12Install;
    await run(
      'install tarball (test/packaging/nest12)',
      npm,
      // --prefer-offline: the app's dependencies were just installed, so npm resolves them (and checks
      // the tarball's peer ranges against Nest 12) from its cache instead of asking the registry again.
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', tarball],
      nest12Dir,
    );
    await node('Nest 12: node:test smoke', ['--test', '--test-reporter=spec', 'smoke.test.mjs'], nest12Dir);
    await node(
      'Nest 12 app: Jest (ESM mode)',
      ['--experimental-vm-modules', path.join('node_modules', 'jest', 'bin', 'jest.js')],
      nest12Dir,
    );
    await node('Nest 12 app: Vitest', [path.join('node_modules', 'vitest', 'vitest.mjs'), 'run'], nest12Dir);

    await node(
      'Nest 12: Nest-layer and e2e specs',
      ['--experimental-vm-modules', jest, '--selectProjects', 'nest12'],
      root,
    );
  } finally {
    fs.rmSync(packDir, { recursive: true, force: true });
  }
  console.log(`\n[test-packed] all passed\n  ${timings.join('\n  ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
