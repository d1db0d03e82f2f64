#!/usr/bin/env node
// `npm run test:examples` (a step of .ci/run): every app under examples/ on the packed build, as a user
// installs it. For each example, in a copy under ~/.cache (EXAMPLES_CACHE) so that nothing resolves from
// the repository's own node_modules:
//   1. `npm ci` from the example's committed lock file, only when that lock file changed (the lock pins
//      everything but nestjs-distributed-lock, which is not on the registry yet: its manifest entry is
//      left out of the install's copy);
//   2. `npm install --no-save <tarball>`: the packed build, peer ranges checked as a user's install does;
//   3. `npm run build` (tsc), then `npm test` (node:test: the test starts redis-server, PostgreSQL where
//      needed, and the app as its own OS process or processes).
// Two examples at a time; each one's output is printed whole when it ends.
//
//   node scripts/test-examples.cjs [--tarball PATH] [--only name,name] [--jobs N]
//   node scripts/test-examples.cjs --install     npm ci of every example only (.ci/run starts it early)
//   node scripts/test-examples.cjs --lock        rewrites the examples' lock files (after a manifest edit)
'use strict';
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const examples = path.join(root, 'examples');
const cache =
  process.env.EXAMPLES_CACHE ?? path.join(os.homedir(), '.cache', 'nestjs-distributed-lock-examples');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const SELF = 'nestjs-distributed-lock';

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};

/** Runs a command; resolves { code, output } (stdout and stderr interleaved). Never rejects. */
function exec(command, commandArgs, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ code: -1, output: `${output}\n${error.message}` }));
    child.on('close', (code, signal) => resolve({ code: code ?? signal, output }));
  });
}

/** The examples: folders of examples/ with a package.json. */
function exampleNames() {
  const only = option('--only')?.split(',');
  return fs
    .readdirSync(examples)
    .filter((name) => fs.existsSync(path.join(examples, name, 'package.json')))
    .filter((name) => !only || only.includes(name));
}

/** Copies `from` into `to`, leaving out node_modules and dist (`to`'s own are kept). */
function copyTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target);
    else fs.copyFileSync(source, target);
  }
}

/** The example's manifest without the package itself (the tarball is installed on top of it). */
function installManifest(name) {
  const manifest = JSON.parse(fs.readFileSync(path.join(examples, name, 'package.json'), 'utf8'));
  delete manifest.dependencies[SELF];
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** The example copied into the cache (with examples/support beside it); npm ci when its lock changed. */
async function prepare(name, log) {
  const dir = path.join(cache, name);
  copyTree(path.join(examples, 'support'), path.join(cache, 'support'));
  copyTree(path.join(examples, name), dir);
  fs.writeFileSync(path.join(dir, 'package.json'), installManifest(name));
  const lockHash = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(dir, 'package-lock.json')))
    .digest('hex');
  const stamp = path.join(dir, 'node_modules', '.installed-lock');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === lockHash) return dir;
  const started = Date.now();
  const result = await exec(npm, ['ci', '--no-audit', '--no-fund'], dir);
  log(`npm ci: ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  if (result.code !== 0) throw new Error(`npm ci failed (exit ${result.code}):\n${result.output}`);
  fs.writeFileSync(stamp, lockHash);
  return dir;
}

/** One example: install the tarball, build, test. Resolves null, or what failed. */
async function testExample(name, tarball) {
  const started = Date.now();
  let output = '';
  const log = (text) => (output += text);
  const step = async (label, command, commandArgs, dir) => {
    const at = Date.now();
    const result = await exec(command, commandArgs, dir);
    log(`$ ${label} (${((Date.now() - at) / 1000).toFixed(1)} s, exit ${result.code})\n`);
    if (result.code !== 0 || label.startsWith('npm test')) log(result.output);
    if (result.code !== 0) throw new Error(`${label} failed (exit ${result.code})`);
  };
  let failure = null;
  try {
    const dir = await prepare(name, log);
    await step(
      'npm install --no-save <tarball>',
      npm,
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', tarball],
      dir,
    );
    await step('npm run build', npm, ['run', 'build'], dir);
    await step('npm test', npm, ['test'], dir);
  } catch (error) {
    failure = `${name}: ${error.message}`;
    if (!output.includes(error.message)) log(`${error.message}\n`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  process.stdout.write(`\n[examples] ${name} (${seconds} s) ${failure ? 'FAILED' : 'passed'}\n${output}`);
  return failure;
}

async function buildAndPack(work) {
  for (const [label, commandArgs] of [
    ['npm run build', ['run', 'build']],
    ['npm pack', ['pack', '--json', '--pack-destination', work]],
  ]) {
    const result = await exec(npm, commandArgs, root);
    if (result.code !== 0) throw new Error(`${label} failed:\n${result.output}`);
    if (label === 'npm pack') {
      return path.join(work, JSON.parse(result.output.replace(/^[^[]*/, ''))[0].filename);
    }
  }
}

/** Runs `task` over `items`, `jobs` at a time; resolves the non-null results. */
async function pool(items, jobs, task) {
  const queue = [...items];
  const failures = [];
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      while (queue.length > 0) {
        const failure = await task(queue.shift());
        if (failure) failures.push(failure);
      }
    }),
  );
  return failures;
}

async function main() {
  const names = exampleNames();
  if (args.includes('--install')) {
    const failures = await pool(names, 2, (name) =>
      prepare(name, (text) => process.stdout.write(`[examples] ${name}: ${text}`)).then(
        () => null,
        (error) => `${name}: ${error.message}`,
      ),
    );
    if (failures.length > 0) throw new Error(failures.join('\n'));
    return;
  }
  if (args.includes('--lock')) {
    for (const name of names) {
      const dir = path.join(cache, name);
      copyTree(path.join(examples, name), dir);
      fs.writeFileSync(path.join(dir, 'package.json'), installManifest(name));
      fs.rmSync(path.join(dir, 'package-lock.json'), { force: true });
      const result = await exec(npm, ['install', '--no-audit', '--no-fund', '--package-lock-only'], dir);
      if (result.code !== 0) throw new Error(`${name}: npm install failed:\n${result.output}`);
      fs.copyFileSync(path.join(dir, 'package-lock.json'), path.join(examples, name, 'package-lock.json'));
      console.log(`[examples] ${name}: package-lock.json written`);
    }
    return;
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-distributed-lock-examples-'));
  try {
    const tarball = option('--tarball') ?? (await buildAndPack(work));
    const started = Date.now();
    const failures = await pool(names, Number(option('--jobs') ?? 2), (name) => testExample(name, tarball));
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (failures.length > 0) {
      console.error(`\n[examples] FAILED (${seconds} s):\n  ${failures.join('\n  ')}`);
      process.exitCode = 1;
    } else {
      console.log(`\n[examples] ${names.length} examples passed (${seconds} s): ${names.join(', ')}`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
