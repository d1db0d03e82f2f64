/*
 * The package in a fresh app that has only node-redis (`redis`), or only Valkey GLIDE, and no
 * ioredis: it loads (require and import, root and core entries), takes and releases a lock on that
 * client, never tries to load ioredis for it, and refuses a URL (which needs ioredis, the default)
 * with an error naming the package. The app's node_modules hold the unpacked tarball (npm run
 * test:packed) or, run alone, a fresh build, plus the client, the required peers and their own
 * dependencies; no NODE_PATH, so nothing else resolves.
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
let built: string;
const dirs: string[] = [];

jest.setTimeout(180_000);

beforeAll(async () => {
  server = await startRedis();
  const packed = process.env.PACKED_PACKAGE_DIR;
  if (packed) {
    built = packed;
  } else {
    built = fs.mkdtempSync(path.join(os.tmpdir(), 'clients-only-build-'));
    dirs.push(built);
    await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
    fs.cpSync(path.join(ROOT, 'dist'), path.join(built, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(built, 'package.json'));
  }
});

afterAll(async () => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

/** The packages a module needs at run time, itself included (its dependencies, transitively). */
function closure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  const manifest = path.join(ROOT, 'node_modules', name, 'package.json');
  if (!fs.existsSync(manifest)) return seen;
  seen.add(name);
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8')) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) closure(dep, seen);
  return seen;
}

/** A fresh app: the package, `client` and what they need, symlinked from this repo's node_modules. */
function app(client: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clients-only-app-'));
  dirs.push(dir);
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(modules);
  // A copy, not a link: Node resolves a linked package's imports from where it really is.
  fs.cpSync(built, path.join(modules, 'nestjs-distributed-lock'), { recursive: true });
  const needed = new Set<string>();
  for (const root of [
    client,
    '@nestjs/common',
    '@nestjs/core',
    'reflect-metadata',
    'rxjs',
    'cluster-key-slot',
  ]) {
    for (const name of closure(root)) needed.add(name);
  }
  expect(needed.has('ioredis')).toBe(false);
  for (const name of needed) {
    fs.mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name), 'dir');
  }
  fs.copyFileSync(path.join(SUPPORT, 'client-only.child.cjs'), path.join(dir, 'child.cjs'));
  return dir;
}

describe.each(['redis', '@valkey/valkey-glide'])('a fresh app with only %s', (client) => {
  it('loads, locks on that client and never loads ioredis; a URL names the missing package', async () => {
    const dir = app(client);
    const env: NodeJS.ProcessEnv = { ...process.env, CLIENT: client, REDIS_URL: server.url };
    delete env.NODE_PATH;
    const { stdout } = await run(
      process.execPath,
      ['-r', path.join(SUPPORT, 'block-ioredis.cjs'), path.join(dir, 'child.cjs')],
      { cwd: dir, env },
    );
    const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
    for (const count of Object.values(report.entries)) expect(count).toBeGreaterThan(0);
    expect(report.fencingToken).toEqual(expect.any(Number));
    expect(report.released).toBe(true);
    expect(report.url).toMatch(/^TypeError: .*needs the package "ioredis"/);
    // Only the URL's engine asked for ioredis; the client's never did.
    expect(report.ioredisAttempts).toEqual(['ioredis']);
  });
});
