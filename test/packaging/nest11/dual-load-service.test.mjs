// One Node process loads the packed package through require() AND through import, and locks through
// both: the Nest app is built from the imported module, the service is fetched with the required class
// as its token, and a lock taken through one copy is re-entered through the other, with one holder in
// Redis. What the class identities of dual-load.test.mjs promise, shown on real locks (Nest 11 from the
// root node_modules, a throw-away redis-server).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

const require = createRequire(import.meta.url);
require('reflect-metadata');
const required = require('nestjs-distributed-lock');
const imported = await import('nestjs-distributed-lock');
const { NestFactory } = await import('@nestjs/core');

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

let redis;
let dir;
let app;

before(async () => {
  const port = await freePort();
  dir = mkdtempSync(path.join(os.tmpdir(), 'dual-load-redis-'));
  redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await new Promise((resolve, reject) => {
    let output = '';
    redis.stdout.on('data', (chunk) => (output += chunk) && /Ready to accept/.test(output) && resolve());
    redis.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
  });
  class AppModule {}
  app = await NestFactory.createApplicationContext(
    {
      module: AppModule,
      imports: [
        imported.DistributedLockModule.forRoot({ redis: `redis://127.0.0.1:${port}`, keyPrefix: 'dual:' }),
      ],
    },
    { logger: false },
  );
});

after(async () => {
  await app?.close();
  redis?.kill('SIGTERM');
  if (redis)
    await new Promise((resolve) => (redis.exitCode !== null ? resolve() : redis.once('exit', resolve)));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the app built from the imported module hands out one service for both classes', () => {
  assert.equal(required.DistributedLockService, imported.DistributedLockService);
  assert.equal(app.get(required.DistributedLockService), app.get(imported.DistributedLockService));
});

test('a lock taken through the import copy is re-entered through the require copy, one holder in Redis', async () => {
  const viaImport = app.get(imported.DistributedLockService);
  const viaRequire = app.get(required.DistributedLockService);
  await viaImport.using('order:1', {}, async (outer) => {
    assert.equal(viaRequire.current('order:1'), outer);
    const inner = await viaRequire.acquire('order:1', { waitMs: 0 });
    try {
      assert.equal(inner.fencingToken, outer.fencingToken);
      const info = await viaRequire.inspect('order:1');
      assert.equal(info.holders.length, 1, JSON.stringify(info));
      assert.equal(info.holders[0].holdCount, 2, JSON.stringify(info));
      assert.equal(info.holders[0].fencingToken, outer.fencingToken);
    } finally {
      assert.equal(await inner.release(), true);
    }
    const info = await viaImport.inspect('order:1');
    assert.equal(info.holders[0].holdCount, 1, JSON.stringify(info));
  });
  assert.equal(await viaRequire.inspect('order:1'), null);
});

test('busy through one copy is the other copy’s LockNotAcquiredError', async () => {
  const viaImport = app.get(imported.DistributedLockService);
  const viaRequire = app.get(required.DistributedLockService);
  const held = await viaImport.acquire('order:2', { reentrant: false });
  try {
    await assert.rejects(
      viaRequire.acquire('order:2', { waitMs: 0, reentrant: false }),
      required.LockNotAcquiredError,
    );
  } finally {
    await held.release();
  }
});
