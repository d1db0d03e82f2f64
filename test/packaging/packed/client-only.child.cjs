// Run in a fresh app whose node_modules hold the built package and ONE Redis client library
// (CLIENT = 'redis' or '@valkey/valkey-glide'), no ioredis: loads the entry points (require and
// import), takes and releases a lock on that client, and prints one JSON report on stdout. A
// preload (block-ioredis.cjs) makes ioredis and iovalkey unresolvable and records any attempt.
'use strict';
require('reflect-metadata');

async function client(name, url) {
  const { hostname, port } = new URL(url);
  if (name === 'redis') {
    const { createClient } = require('redis');
    const c = createClient({ url });
    c.on('error', () => undefined);
    return { redis: c, close: () => c.close() }; // passed unconnected: the library connects it
  }
  const { GlideClient } = require('@valkey/valkey-glide');
  const c = await GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }] });
  return { redis: c, close: async () => c.close() };
}

async function main() {
  const report = { entries: {} };
  for (const entry of ['nestjs-distributed-lock', 'nestjs-distributed-lock/core']) {
    report.entries[`require ${entry}`] = Object.keys(require(entry)).length;
    report.entries[`import ${entry}`] = Object.keys(await import(entry)).length;
  }
  const { createLockEngine } = require('nestjs-distributed-lock/core');
  const { redis, close } = await client(process.env.CLIENT, process.env.REDIS_URL);
  const engine = createLockEngine({ redis, keyPrefix: 'client-only:' });
  try {
    const handle = await engine.acquire('packed', { waitMs: 5000 });
    report.fencingToken = handle.fencingToken;
    report.released = await handle.release();
  } finally {
    await engine.close();
    await close();
  }
  // A URL needs ioredis, the default: a clear error naming it, before any connection.
  try {
    createLockEngine({ redis: process.env.REDIS_URL });
    report.url = 'opened';
  } catch (error) {
    report.url = `${error.name}: ${error.message}`;
  }
  report.ioredisAttempts = [...globalThis.__blockedAttempts];
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
