// What the examples' tests start: a redis-server (and PostgreSQL for fencing-postgres) on 127.0.0.1 and a
// free port, and the example app itself as its own OS process (`node dist/main.js`). Node built-ins only:
// each example's test imports this file from the examples folder it was copied with.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A free TCP port on 127.0.0.1 (the OS picks one from its ephemeral range). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Spawns a child and resolves once its output matches `ready`; rejects if it exits first. */
function startChild(label, command, args, { ready, env, cwd, uid, gid }) {
  const child = spawn(command, args, {
    cwd,
    uid,
    gid,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const started = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (ready.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then(({ code, signal }) =>
      reject(new Error(`${label} exited (${code ?? signal}) before it was ready:\n${output}`)),
    );
  });
  return {
    child,
    started,
    exited,
    output: () => output,
    /** SIGTERM (SIGKILL after 10 s); resolves how it exited. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
}

/** A redis-server without persistence on a free port: `{ url, port, stop() }`. */
export async function startRedis() {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'example-redis-'));
  const server = startChild(
    'redis-server',
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { ready: /Ready to accept connections/ },
  );
  await server.started;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** initdb/postgres: PG_BIN_DIR, else PATH, else the newest /usr/lib/postgresql/<version>/bin (Debian). */
function postgresBin() {
  const dirs = [process.env.PG_BIN_DIR, ...(process.env.PATH ?? '').split(path.delimiter)].filter(Boolean);
  const found = dirs.find((dir) => fs.existsSync(path.join(dir, 'initdb')));
  if (found) return found;
  const debian = '/usr/lib/postgresql';
  const versions = fs.existsSync(debian) ? fs.readdirSync(debian).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (no initdb found)');
  return path.join(debian, versions[0], 'bin');
}

/**
 * A throwaway PostgreSQL on a free port, trust authentication on loopback: `{ url, stop() }`. PostgreSQL
 * refuses to run as root, so as root it runs as the `postgres` user Debian's package creates.
 */
export async function startPostgres() {
  const bin = postgresBin();
  const as = {};
  if (process.getuid?.() === 0) {
    as.uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    as.gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'example-pg-'));
  if (as.uid !== undefined) fs.chownSync(dir, as.uid, as.gid);
  const data = path.join(dir, 'data');
  await run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync'], {
    ...as,
    cwd: dir,
    env: { ...process.env, LC_ALL: 'C' },
  });
  const port = await freePort();
  // prettier-ignore
  const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  const server = startChild('postgres', path.join(bin, 'postgres'), args, {
    ready: /ready to accept connections/,
    cwd: dir,
    ...as,
  });
  await server.started;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the built example (`node dist/main.js` in the example's folder) with `env`, and resolves once
 * its output matches `ready` (default: Nest's "successfully started"). `stop()` sends SIGTERM, the way
 * systemd, Docker and Kubernetes stop an app.
 */
export async function startApp(env, { ready = /successfully started/ } = {}) {
  const app = startChild('the app', process.execPath, ['dist/main.js'], { ready, env });
  await app.started;
  return app;
}
