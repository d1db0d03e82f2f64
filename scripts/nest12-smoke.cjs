#!/usr/bin/env node
// `npm run test:nest12`: the library as users get it (built, packed, installed from the tarball)
// inside an ESM-only NestJS 12 app. Steps:
//   1. npm run build           (dist/ with the compiled CommonJS and the Lua scripts)
//   2. npm pack → a temp dir   (exactly the files a user would download)
//   3. in test/nest12: npm ci, then npm install --no-save <tarball>
//   4. node --test smoke.test.mjs (starts its own redis-server on a free port)
// Idempotent: every run rebuilds, repacks and reinstalls; nothing outside dist/ and
// test/nest12/node_modules is written, and the temp dir is removed.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const smokeDir = path.join(root, 'test', 'nest12');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command, args, cwd, { capture = false } = {}) {
  console.log(`[nest12-smoke] ${path.relative(root, cwd) || '.'}$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, {
    cwd,
    stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`[nest12-smoke] failed: ${command} ${args.join(' ')} (exit ${result.status})`);
    process.exit(result.status ?? 1);
  }
  return result.stdout;
}

const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nest12-pack-'));
let status = 1;
try {
  run(npm, ['run', 'build'], root);
  const packed = JSON.parse(
    run(npm, ['pack', '--json', '--pack-destination', packDir], root, { capture: true }),
  );
  const tarball = path.join(packDir, packed[0].filename);
  run(npm, ['ci', '--no-audit', '--no-fund'], smokeDir);
  run(npm, ['install', '--no-save', '--no-audit', '--no-fund', tarball], smokeDir);
  const test = spawnSync(process.execPath, ['--test', '--test-reporter=spec', 'smoke.test.mjs'], {
    cwd: smokeDir,
    stdio: 'inherit',
  });
  status = test.status ?? 1;
} finally {
  fs.rmSync(packDir, { recursive: true, force: true });
}
process.exit(status);
