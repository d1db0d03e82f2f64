// Run with `node -r <block-optional-peers.cjs>` where `nestjs-distributed-lock` resolves to a build of
// the package (REDIS_URL set): loads `nestjs-distributed-lock/fencing` in plain Node, with the
// optional peers AND Nest unresolvable, writes through the Redis fenced store (ioredis, a required
// peer), builds a guarded UPDATE, and shows that the Drizzle helper names its missing peer. Then
// checks that `nestjs-distributed-lock/fencing/nest` is the entry that needs Nest. One JSON report
// on stdout. Used by test/packed-build/no-optional-peers.spec.ts.
'use strict';
const Module = require('node:module');

const nestAttempts = [];
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith('@nestjs/')) {
    nestAttempts.push(request);
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};

async function main() {
  const report = {};
  const fencing = require('nestjs-distributed-lock/fencing');
  report.names = Object.keys(fencing).length;
  report.attemptsAtLoad = [...globalThis.__optionalPeerAttempts, ...nestAttempts];
  const Redis = require('ioredis');
  const redis = new Redis(process.env.REDIS_URL);
  try {
    const store = new fencing.RedisFencedStore(redis);
    await store.set('packed:res', 'v1', { key: 'res', token: 5, owner: 'a' });
    try {
      await store.set('packed:res', 'v0', { key: 'res', token: 4, owner: 'b' });
      report.stale = 'written';
    } catch (error) {
      report.stale = `${error.name} ${error instanceof fencing.StaleFenceError}`;
    }
    report.value = await redis.get('packed:res');
  } finally {
    redis.disconnect();
  }
  report.sql = fencing.fencedUpdateSql({
    dialect: 'postgres',
    table: 't',
    set: { a: 1 },
    where: { id: 1 },
    fence: { key: 'k', token: 1, owner: 'o' },
  }).text;
  try {
    await fencing.drizzleFencedUpdate(
      {},
      { table: {}, where: undefined, set: {}, fence: { key: 'k', token: 1, owner: 'o' } },
    );
    report.drizzle = 'no error';
  } catch (error) {
    report.drizzle = `${error.name}: ${error.message}`;
  }
  try {
    require('nestjs-distributed-lock/fencing/nest');
    report.nest = 'loaded';
  } catch (error) {
    report.nest = error.message.split('\n')[0];
  }
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
