#!/usr/bin/env node
// For the packaging step: builds and packs the package, installs the tarball into a temporary app
// with only the required peers (npm, from the registry), and runs
// test/observability/support/no-optional-peers.child.cjs there with the optional peers blocked.
// Needs a Redis: REDIS_URL (default redis://127.0.0.1:6379). Exits non-zero on any failure.
//   node scripts/check-packed-optional-peers.cjs
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const pkg = require(path.join(root, 'package.json'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const sh = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packed-optional-peers-'));
try {
  sh(npm, ['run', 'build'], root);
  const tarball = sh(npm, ['pack', '--silent', '--pack-destination', dir], root).trim().split('\n').pop();
  const optional = new Set(Object.keys(pkg.peerDependenciesMeta || {}));
  const required = Object.entries(pkg.peerDependencies)
    .filter(([name]) => !optional.has(name))
    .map(([name]) => `${name}@${pkg.devDependencies[name] || pkg.peerDependencies[name]}`);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  sh(
    npm,
    ['install', '--no-audit', '--no-fund', '--legacy-peer-deps', path.join(dir, tarball), ...required],
    dir,
  );
  for (const name of optional) {
    if (fs.existsSync(path.join(dir, 'node_modules', name)))
      throw new Error(`${name} got installed; cannot check`);
  }
  fs.copyFileSync(
    path.join(root, 'test/observability/support/no-optional-peers.child.cjs'),
    path.join(dir, 'child.cjs'),
  );
  const out = execFileSync(
    process.execPath,
    ['-r', path.join(root, 'test/observability/support/block-optional-peers.cjs'), 'child.cjs'],
    { cwd: dir, env: { ...process.env, REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379' } },
  ).toString();
  const report = JSON.parse(out);
  const problems = [];
  if (report.attemptsAtLoad.length > 0)
    problems.push(`optional peers loaded at load time: ${report.attemptsAtLoad}`);
  if (report.released !== true) problems.push('the lock was not released');
  if (!/OptionalPeerMissingError/.test(report.otel)) problems.push(`otel: ${report.otel}`);
  if (!/OptionalPeerMissingError/.test(report.prom)) problems.push(`prom: ${report.prom}`);
  console.log(JSON.stringify(report, null, 2));
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exitCode = 1;
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
