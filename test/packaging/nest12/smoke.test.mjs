// Nest 12 smoke test of the PACKED library (installed from its tarball by scripts/test-packed.cjs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { DistributedLockService, LockNotAcquiredError } from 'nestjs-distributed-lock';
import { startSmokeApp } from './smoke-app.mjs';
import { startRedisServer } from './redis-process.mjs';

const require = createRequire(import.meta.url);
let redis;
let app;
let url;

before(async () => {
  redis = await startRedisServer();
  ({ app, url } = await startSmokeApp(redis.url));
});

after(async () => {
  await app?.close();
  await redis?.stop();
});

test('runs on NestJS 12 with the packed ES module build', () => {
  assert.match(require('@nestjs/core/package.json').version, /^12\./);
  assert.match(import.meta.resolve('nestjs-distributed-lock'), /\/dist\/esm\/index\.js$/);
  assert.equal(typeof LockNotAcquiredError, 'function');
});

test('require() of the package gives the same classes as import on Nest 12', () => {
  const required = require('nestjs-distributed-lock');
  assert.equal(required.DistributedLockService, DistributedLockService);
  assert.equal(required.LockNotAcquiredError, LockNotAcquiredError);
});

test('forRoot provides the lock service', async () => {
  const locks = app.get(DistributedLockService);
  const token = await locks.using('direct', {}, async (lock) => lock.fencingToken);
  assert.ok(token > 0);
});

test('a decorated route answers 200 with the fencing token from current()', async () => {
  const res = await fetch(`${url}/seckill/1`);
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.key, 'seckill:1');
  assert.equal(typeof body.fencingToken, 'number');
  assert.ok(body.fencingToken > 0);
});

test('a decorated route answers 423 with Retry-After while the lock is held elsewhere', async () => {
  const locks = app.get(DistributedLockService);
  const held = await locks.acquire('seckill:2', { leaseMs: 10_000 });
  try {
    const res = await fetch(`${url}/seckill/2`);
    assert.equal(res.status, 423);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  } finally {
    await held.release();
  }
  assert.equal((await fetch(`${url}/seckill/2`)).status, 200);
});

test('app.close() leaves the process able to exit by itself', { timeout: 60_000 }, async (t) => {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('./exit-check.mjs', import.meta.url)), redis.url],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  t.signal.addEventListener('abort', () => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  // A process that keeps a handle open never exits; the test's timeout then fails it.
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  assert.match(out, /closed/);
});
