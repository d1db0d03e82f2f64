// The packed package loaded both ways in ONE Node process (Nest 11 from the root node_modules):
// require() and import must hand out the same classes, so Nest's injection tokens and `instanceof`
// work whichever way the app, its tests or a third-party module load the library.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const imported = await import('nestjs-distributed-lock');
const importedCore = await import('nestjs-distributed-lock/core');
const required = require('nestjs-distributed-lock');
const requiredCore = require('nestjs-distributed-lock/core');

// The `module-sync` condition: Node ≥ 20.19 / 22.12 take the one ES module build for require() and
// import alike (runtimes that do not know the condition, Jest and bundlers, take import or require).
test('resolves require() and import to the one ES module build', () => {
  assert.match(import.meta.resolve('nestjs-distributed-lock'), /\/dist\/esm\/index\.js$/);
  assert.equal(
    require.resolve('nestjs-distributed-lock'),
    fileURLToPath(import.meta.resolve('nestjs-distributed-lock')),
  );
  assert.match(require('@nestjs/core/package.json').version, /^11\./);
});

test('require() and import give the very same Nest and error classes', () => {
  for (const name of [
    'DistributedLockModule',
    'DistributedLockService',
    'DistributedLock',
    'LockNotAcquiredError',
    'LockLostError',
    'LockError',
  ]) {
    assert.equal(typeof imported[name], 'function', name);
    assert.equal(required[name], imported[name], name);
  }
  assert.equal(requiredCore.LockNotAcquiredError, imported.LockNotAcquiredError);
  assert.equal(importedCore.LockEngine, requiredCore.LockEngine); // the engine lives in the core entry
});

test('instanceof works across the two ways of loading', () => {
  const fromRequire = new required.LockNotAcquiredError('k', 5);
  const fromImport = new imported.LockLostError('k', 'expired');
  assert.ok(fromRequire instanceof imported.LockNotAcquiredError);
  assert.ok(fromRequire instanceof importedCore.LockError);
  assert.ok(fromImport instanceof required.LockLostError);
  assert.ok(fromImport instanceof requiredCore.LockError);
});

test('a CommonJS app on Nest 11 loads it without warnings', () => {
  const run = spawnSync(
    process.execPath,
    [
      '-e',
      "require('reflect-metadata'); const l = require('nestjs-distributed-lock'); require('nestjs-distributed-lock/core'); console.log(typeof l.DistributedLockModule.forRoot)",
    ],
    { cwd: import.meta.dirname, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'function');
  assert.equal(run.stderr, '');
});
