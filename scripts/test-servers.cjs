#!/usr/bin/env node
// The server matrix (docs/TEST-SUITE.md, "Servers"): the real-Redis specs that say whether the library works
// on a server, run on each server beside Debian 12's Redis 7.0 (which `npm test` runs whole). The servers are
// built by scripts/servers.sh (from Debian 13's source packages, cached per version); this picks the binaries
// with REDIS_SERVER_BIN and REDIS_CLI_BIN, which every harness helper reads (test/support/redis-server.ts,
// redis-cluster.ts; Sentinels run as `<server> <conf> --sentinel`, which Valkey takes too).
//
//   node scripts/test-servers.cjs [redis-8.0] [valkey-8.1]     default: both
//
// Per server, three Jest runs one after the other, as `npm test` keeps these kinds apart: the redis-project
// specs below two files at a time, the fault specs two at a time, then the timing spec (holder-history: its
// assertions are about when holders are told) in band with nothing else running. Prints the time per server;
// any failure fails the run after every server ran.
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');

/** The servers of the matrix: the name scripts/servers.sh builds, and what it is. */
const SERVERS = {
  'redis-8.0': { build: 'redis', label: 'Redis 8.0.2' },
  'valkey-8.1': { build: 'valkey', label: 'Valkey 8.1.1' },
};

/**
 * What runs on each server, and why (the subset keeps .ci/run under 30 minutes on 2 cores; the rest of the
 * suite exercises the library's own logic, which does not change with the server):
 */
const SPECS = [
  // The least-privilege ACL, single and Cluster, and on every client family: ACL LOG must stay empty.
  'test/reliability/acl.spec.ts',
  'test/clients/acl-clients.spec.ts',
  // Standalone, every client family: the shared behaviour suite (every lock kind, wake-ups, renewal,
  // release, WRONGTYPE, NOSCRIPT), the replies each family decodes, and wake-ups across families.
  'test/clients/behaviour-ioredis.spec.ts',
  'test/clients/behaviour-node-redis5.spec.ts',
  'test/clients/behaviour-node-redis6.spec.ts',
  'test/clients/behaviour-iovalkey.spec.ts',
  'test/clients/behaviour-glide.spec.ts',
  'test/clients/reply-shapes.spec.ts',
  'test/clients/wakeups.spec.ts',
  // Sentinel (failover, WAIT) and Cluster (MOVED/ASK, sharded pub/sub, resharding), every family.
  'test/topologies/sentinel.spec.ts',
  'test/clients/sentinel-node-redis.spec.ts',
  'test/topologies/cluster.spec.ts',
  'test/clients/cluster-clients.spec.ts',
  // AUTH and TLS (the builds have BUILD_TLS=yes).
  'test/reliability/credentials.spec.ts',
  // What differs between servers, and commands renamed away (managed services).
  'test/servers',
];
/**
 * The fault specs (the faults project of jest.config.js), two at a time after the specs above, as `npm test`
 * runs them apart from the redis project: they kill, freeze and fail over servers and keep both cores busy,
 * and beside them the redis project's watchdog and `waitMs: 0` specs miss their deadlines on a loaded machine
 * (seen once here: a watchdog lock expired on a Cluster, a `tryAcquire` timed out, at load average 15).
 */
const FAULT_SPECS = [
  // Per family: SCRIPT FLUSH, every connection killed, Redis frozen; a Cluster failover (WAIT, promotion).
  'test/faults/clients-faults.spec.ts',
  'test/faults/clients-cluster-failover.spec.ts',
  // SCRIPT FLUSH under every operation: the script cache and NOSCRIPT replies.
  'test/faults/script-flush.spec.ts',
  // Old and new processes on one server: the data layout the scripts write.
  'test/faults/rolling-deploy.spec.ts',
];
/** Run in band after the rest: assertions on when holders are told (test/faults/timing/). */
const TIMING_SPECS = ['test/faults/timing/holder-history.spec.ts'];

function binDir(build) {
  return execFileSync('bash', [path.join(root, 'scripts', 'servers.sh'), 'bin', build], {
    encoding: 'utf8',
  }).trim();
}

function run(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [jest, ...args], { cwd: root, stdio: 'inherit', env });
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
}

async function main() {
  const names = process.argv.slice(2);
  const chosen = names.length > 0 ? names : Object.keys(SERVERS);
  for (const name of chosen) {
    if (!SERVERS[name]) throw new Error(`unknown server ${name}: one of ${Object.keys(SERVERS).join(', ')}`);
  }
  const times = [];
  const failed = [];
  for (const name of chosen) {
    const { build, label } = SERVERS[name];
    const bin = binDir(build);
    const env = {
      ...process.env,
      REDIS_SERVER_BIN: path.join(bin, 'redis-server'),
      REDIS_CLI_BIN: path.join(bin, 'redis-cli'),
      // The fault specs' figures (test/support/fault-figures.ts) go to a file of this server's own.
      FAULT_FIGURES_FILE: `${name}.json`,
    };
    process.stdout.write(`\n[servers] ${label} (${bin})\n`);
    const started = Date.now();
    const common = ['--testTimeout=120000', '--ci'];
    // Every run, whatever the one before gave: a matrix run reports everything that differs.
    const codes = [
      await run([...common, '--maxWorkers=2', ...SPECS], env),
      await run([...common, '--maxWorkers=2', ...FAULT_SPECS], env),
      await run([...common, '--runInBand', ...TIMING_SPECS], env),
    ];
    const code = codes.find((c) => c !== 0) ?? 0;
    const seconds = Math.round((Date.now() - started) / 1000);
    times.push(`${label}: ${seconds} s${code === 0 ? '' : ' (failed)'}`);
    if (code !== 0) failed.push(label);
  }
  process.stdout.write(`\n[servers] time per server: ${times.join(', ')}\n`);
  if (failed.length > 0) {
    process.stdout.write(`[servers] failed on ${failed.join(', ')}\n`);
    process.exit(1);
  }
}

// The lists are read by test/docs/tested-on.spec.ts, which holds the "Tested on" tables to them.
module.exports = { SERVERS, SPECS, FAULT_SPECS, TIMING_SPECS };

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}
