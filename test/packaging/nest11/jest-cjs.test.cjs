// Jest's CommonJS runtime does not know the `module-sync` condition: it takes the package's `require`
// condition, the CommonJS build (dist/cjs), on every Node version. A Nest 11 app's Jest tests get one
// copy of every class from it, whichever entry point they require.
'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
require('reflect-metadata');
const { Test } = require('@nestjs/testing');
const lock = require('nestjs-distributed-lock');
const core = require('nestjs-distributed-lock/core');

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

it('loads the CommonJS build with one copy of every class', () => {
  expect(require.resolve('nestjs-distributed-lock')).toMatch(/[\\/]dist[\\/]cjs[\\/]index\.js$/);
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
