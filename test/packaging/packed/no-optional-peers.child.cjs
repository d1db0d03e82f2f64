// Run with `node -r ./block-optional-peers.cjs` where `nestjs-distributed-lock` resolves to a build of
// the package (REDIS_URL set): loads every entry point, takes and releases a lock, and prints one
// JSON report on stdout. Used by test/packed-build/no-optional-peers.spec.ts.
'use strict';
require('reflect-metadata');

async function main() {
  const report = { peers: globalThis.__optionalPeers, entries: {}, attemptsAtLoad: [] };
  for (const entry of [
    'nestjs-distributed-lock',
    'nestjs-distributed-lock/core',
    'nestjs-distributed-lock/observability',
  ]) {
    const mod = require(entry);
    report.entries[entry] = Object.keys(mod).length;
  }
  report.attemptsAtLoad = [...globalThis.__optionalPeerAttempts];
  try {
    require('nestjs-distributed-lock/terminus');
    report.terminus = 'loaded';
  } catch (error) {
    report.terminus = error.message.split('\n')[0];
  }

  const lib = require('nestjs-distributed-lock');
  // The engine for plain Node is the core entry; the observability helpers their own entry.
  const { createLockEngine } = require('nestjs-distributed-lock/core');
  const observability = require('nestjs-distributed-lock/observability');
  const engine = createLockEngine({ redis: process.env.REDIS_URL, keyPrefix: 'no-peers:' });
  try {
    const handle = await engine.acquire('k');
    report.fencingToken = handle.fencingToken;
    report.released = await handle.release();
    for (const [name, call] of [
      ['otel', () => observability.instrumentLockEvents(engine.events)],
      [
        'prom',
        () => observability.registerLockMetrics({ registerMetric() {}, removeSingleMetric() {} }, engine),
      ],
    ]) {
      try {
        call();
        report[name] = 'no error';
      } catch (error) {
        report[name] = `${error.name}: ${error.message}`;
      }
    }
    // Lock errors outside HTTP: each transport's peer is loaded only when a call of that type
    // is answered. graphql absent: an Error with the same `extensions` (what graphql-js sends);
    // @nestjs/microservices absent: the missing peer is named.
    const { throwError, lastValueFrom } = require('rxjs');
    require('@nestjs/common').Logger.overrideLogger(false); // stdout carries the report only
    const interceptor = new lib.DistributedLockTransportInterceptor();
    const busy = new lib.LockNotAcquiredError('k', 10, 1500);
    const answer = async (type) => {
      const context = { getType: () => type };
      const next = { handle: () => throwError(() => busy) };
      try {
        const value = await lastValueFrom(interceptor.intercept(context, next));
        return { returned: value.constructor.name, message: value.message, extensions: value.extensions };
      } catch (error) {
        return { thrown: `${error.name}: ${error.message}` };
      }
    };
    report.transports = { graphql: await answer('graphql'), rpc: await answer('rpc') };
  } finally {
    await engine.close();
  }
  process.stdout.write(JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exitCode = 1;
});
