#!/usr/bin/env node
// Runs before `npm test` and `npm run demo`: makes a fresh clone work with nothing else typed.
// 1. redis-server (and redis-sentinel) on PATH — installed with apt-get when we are root, else a clear message.
// 2. node_modules matching package-lock.json — `npm ci` when missing or stale.
// 3. Debian's Chromium (/usr/bin/chromium) for the console's browser test — installed with apt-get when root.
'use strict';
const { execSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function ensureRedis() {
  if (has('redis-server') && has('redis-cli') && has('redis-sentinel')) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !has('apt-get')) {
    console.error(
      'redis-server, redis-cli and redis-sentinel are needed on PATH (tests start real Redis processes).\n' +
        'Install them, e.g. `sudo apt-get install -y redis-server redis-sentinel` or `brew install redis`.',
    );
    process.exit(1);
  }
  console.log('[ensure-env] installing redis-server and redis-sentinel with apt-get …');
  execSync(
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-sentinel',
    {
      stdio: 'inherit',
    },
  );
  // Debian starts a system redis on 6379 after install; tests use free ports, but do not leave it running.
  spawnSync('sh', ['-c', 'service redis-server stop >/dev/null 2>&1 || true']);
}

function ensureNodeModules() {
  const lock = path.join(root, 'package-lock.json');
  const installed = path.join(root, 'node_modules', '.package-lock.json');
  if (fs.existsSync(installed) && fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  console.log('[ensure-env] installing node modules with npm ci …');
  execSync('npm ci --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
}

function ensureChromium() {
  if (process.env.CHROMIUM_PATH || fs.existsSync('/usr/bin/chromium')) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !has('apt-get')) {
    console.error(
      '[ensure-env] no /usr/bin/chromium: test/console/console-browser.spec.ts will fail. Install Chromium ' +
        '(`sudo apt-get install -y chromium`) or set CHROMIUM_PATH.',
    );
    return;
  }
  console.log('[ensure-env] installing chromium with apt-get (the console browser test) …');
  execSync('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium', {
    stdio: 'inherit',
  });
}

ensureRedis();
ensureNodeModules();
ensureChromium();
