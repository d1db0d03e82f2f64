/*
 * The package loads and locks without its optional peers (@opentelemetry/api, prom-client,
 * @nestjs/terminus, graphql, @nestjs/microservices, @nestjs/websockets): lib is built by `npm run build`, laid out as an installed package (its
 * package.json exports map included), and run in a child Node whose module resolution refuses the
 * optional peers and records any attempt to load them. Only the terminus subpath needs its peer,
 * and says so. Part of `npm run test:packed` (on the packed tarball, the `packed` Jest project), not of
 * the parallel run; alone (`npx jest --selectProjects packed`) it builds lib first.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startRedis, type RedisServerProcess } from '../../support/redis-server';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const SUPPORT = __dirname;

let server: RedisServerProcess;
let dir: string;

beforeAll(async () => {
  server = await startRedis();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'no-optional-peers-'));
  const pkgDir = path.join(dir, 'node_modules', 'nestjs-distributed-lock');
  const packed = process.env.PACKED_PACKAGE_DIR;
  if (packed) {
    // `npm run test:packed` (the `packed` project): the unpacked tarball, exactly what users install.
    fs.cpSync(packed, pkgDir, { recursive: true });
  } else {
    // Run alone: the real build (ESM + CJS + entry points), laid out as an installed package.
    await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
    fs.cpSync(path.join(ROOT, 'dist'), path.join(pkgDir, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkgDir, 'package.json'));
  }
  // The required peers and the one dependency, as an app's install would provide them (ES modules
  // ignore NODE_PATH).
  for (const peer of [
    '@nestjs/common',
    '@nestjs/core',
    'ioredis',
    'reflect-metadata',
    'rxjs',
    'cluster-key-slot',
  ]) {
    fs.mkdirSync(path.dirname(path.join(dir, 'node_modules', peer)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules', peer), path.join(dir, 'node_modules', peer), 'dir');
  }
  fs.copyFileSync(path.join(SUPPORT, 'no-optional-peers.child.cjs'), path.join(dir, 'child.cjs'));
}, 120_000);

afterAll(async () => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

describe('without the optional peers installed', () => {
  it('loads every entry point but terminus, takes a lock, and names the missing peer when a feature needs it', async () => {
    const { stdout } = await run(
      process.execPath,
      ['-r', path.join(SUPPORT, 'block-optional-peers.cjs'), path.join(dir, 'child.cjs')],
      // Required peers come from this repo's node_modules, as an app's own install would provide them.
      {
        cwd: dir,
        // ioredis is an optional peer too (issue 26), kept here: the child locks through a URL.
        env: {
          ...process.env,
          NODE_PATH: path.join(ROOT, 'node_modules'),
          REDIS_URL: server.url,
          KEEP_PEERS: 'ioredis',
        },
      },
    );
    const report = JSON.parse(stdout);
    expect(report.peers.sort()).toEqual([
      '@nestjs/microservices',
      '@nestjs/terminus',
      '@nestjs/websockets',
      '@opentelemetry/api',
      '@prisma/client',
      '@valkey/valkey-glide',
      'drizzle-orm',
      'graphql',
      'iovalkey',
      'knex',
      'prom-client',
      'redis',
      'typeorm',
    ]);
    expect(report.attemptsAtLoad).toEqual([]);
    for (const entry of [
      'nestjs-distributed-lock',
      'nestjs-distributed-lock/core',
      'nestjs-distributed-lock/observability',
    ]) {
      expect(report.entries[entry]).toBeGreaterThan(0);
    }
    expect(report.fencingToken).toEqual(expect.any(Number));
    expect(report.released).toBe(true);
    expect(report.otel).toMatch(/^OptionalPeerMissingError: .*"@opentelemetry\/api"/);
    expect(report.prom).toMatch(/^OptionalPeerMissingError: .*"prom-client"/);
    expect(report.terminus).toMatch(/Cannot find (module|package) '@nestjs\/terminus'/);
    // The transport answers load their peer only when a call of that type is answered.
    expect(report.transports.graphql).toEqual({
      returned: 'Error',
      message: 'The resource is locked by another request; retry later',
      extensions: { code: 'LOCKED', retryAfterMs: 1500 },
    });
    expect(report.transports.rpc.thrown).toMatch(/^OptionalPeerMissingError: .*"@nestjs\/microservices"/);
  });

  it('loads nestjs-distributed-lock/fencing in plain Node without Nest or the ORMs, and writes fenced', async () => {
    fs.copyFileSync(path.join(__dirname, 'fencing-entry.child.cjs'), path.join(dir, 'fencing-child.cjs'));
    const { stdout } = await run(
      process.execPath,
      ['-r', path.join(SUPPORT, 'block-optional-peers.cjs'), path.join(dir, 'fencing-child.cjs')],
      {
        cwd: dir,
        // ioredis kept, as above: the child's fenced lock goes through a URL.
        env: {
          ...process.env,
          NODE_PATH: path.join(ROOT, 'node_modules'),
          REDIS_URL: server.url,
          KEEP_PEERS: 'ioredis',
        },
      },
    );
    const report = JSON.parse(stdout);
    expect(report.attemptsAtLoad).toEqual([]);
    expect(report.names).toBeGreaterThan(10);
    expect(report.stale).toBe('StaleFenceError true');
    expect(report.value).toBe('v1');
    expect(report.sql).toMatch(/^UPDATE "t" SET "a" = \$1, "lock_fence" = \$2/);
    expect(report.drizzle).toMatch(/^OptionalPeerMissingError: .*"drizzle-orm"/);
    expect(report.nest).toMatch(/Cannot find (module|package) '@nestjs\//);
  });
});
