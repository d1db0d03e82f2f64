// Jest's CommonJS runtime has its own require(), which loads ES modules only on Node ≥ 24.9, and does not
// know the `module-sync` condition: it takes the package's `require` condition, the CommonJS build
// (dist/cjs). Before issue 36 that entry loaded the ES module build through require(esm) and fell back
// to dist/cjs (dist/load.cjs); a Nest 11 app's Jest tests work either way.
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
require('reflect-metadata');
const { Test } = require('@nestjs/testing');
const lock = require('nestjs-distributed-lock');
const core = require('nestjs-distributed-lock/core');

const [major, minor] = process.versions.node.split('.').map(Number);
const nativeRequireEsm = major > 24 || (major === 24 && minor >= 9);

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

let redis;
let port;

beforeAll(async () => {
  port = await freePort();
  redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  await new Promise((resolve) =>
    redis.stdout.on('data', (chunk) => /Ready to accept/.test(chunk) && resolve()),
  );
});

afterAll(async () => {
  redis.kill('SIGTERM');
  await new Promise((resolve) => redis.once('exit', resolve));
});

const entries = path.dirname(require.resolve('nestjs-distributed-lock'));
const loader = path.join(entries, '..', 'load.cjs');
const hasLoader = require('node:fs').existsSync(loader);

it(`loads ${hasLoader ? (nativeRequireEsm ? 'the ES module build' : 'the CommonJS copy') : 'the CommonJS build'} with one copy of every class`, () => {
  if (hasLoader) {
    const load = require(loader);
    const loaded = load(
      () => (require(path.join(entries, '..', 'esm', 'index.js')), 'esm'),
      () => 'cjs',
    );
    expect(loaded).toBe(nativeRequireEsm ? 'esm' : 'cjs');
  } else {
    expect(require.resolve('nestjs-distributed-lock')).toMatch(/[\\/]dist[\\/]cjs[\\/]index\.js$/);
  }
  expect(core.LockNotAcquiredError).toBe(lock.LockNotAcquiredError);
  expect(new core.LockLostError('k', 'expired')).toBeInstanceOf(lock.LockError);
});

it('runs forRoot and a lock in a Nest 11 testing module', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [lock.DistributedLockModule.forRoot({ redis: `redis://127.0.0.1:${port}` })],
  }).compile();
  await moduleRef.init();
  try {
    const service = moduleRef.get(lock.DistributedLockService);
    const token = await service.using('jest-cjs', {}, async (handle) => handle.fencingToken);
    expect(token).toBeGreaterThan(0);
    await expect(
      service.using('busy', {}, () => service.acquire('busy', { waitMs: 0, reentrant: false })),
    ).rejects.toBeInstanceOf(lock.LockNotAcquiredError);
  } finally {
    await moduleRef.close();
  }
});
