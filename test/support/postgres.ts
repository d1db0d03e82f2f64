/*
 * A real PostgreSQL for the fencing specs: `initdb` into a fresh folder under os.tmpdir(), `postgres`
 * on 127.0.0.1 and a free port (free-port.ts), trust authentication for loopback, no fsync (a test
 * cluster). Started and stopped by the spec; stop() removes the folder, and the process reaper
 * SIGKILLs the server if the test process dies first. Binaries: PG_BIN_DIR, else PATH, else the
 * newest /usr/lib/postgresql/<version>/bin (Debian does not put them on PATH). PostgreSQL refuses to
 * run as root: as root, the server runs as the `postgres` user the Debian package creates.
 */
import { execFile, spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { promisify } from 'util';
import { Client } from 'pg';
import { getFreePort, LOCALHOST } from './free-port';
import { terminateProcess, trackChildPid, untrackChildPid } from './process-reaper';
import { sleep } from './wait';

const run = promisify(execFile);

/** A running PostgreSQL of the harness. */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly pid: number;
  /** Everything the server wrote to stderr/stdout (for failure messages). */
  log(): string;
  /** Fast shutdown (SIGINT, SIGKILL after 5 s), then the data folder is removed. */
  stop(): Promise<void>;
}

/** The folder holding initdb and postgres, or undefined when PostgreSQL is not installed. */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.PG_BIN_DIR;
  if (fromEnv && fs.existsSync(path.join(fromEnv, 'initdb'))) return fromEnv;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres')))
      return dir;
  }
  const debian = '/usr/lib/postgresql';
  if (!fs.existsSync(debian)) return undefined;
  const versions = fs
    .readdirSync(debian)
    .filter((v) => fs.existsSync(path.join(debian, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(debian, versions[0]!, 'bin') : undefined;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

async function serverUser(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {};
  const { stdout: uid } = await run('id', ['-u', 'postgres']).catch(() => {
    throw new Error(
      "running as root, and there is no `postgres` user to run PostgreSQL as (install Debian's postgresql)",
    );
  });
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

async function waitForConnection(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`postgres exited at start:\n${log()}`);
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined); // never connected: nothing to close
      if (Date.now() > deadline)
        throw new Error(`postgres not reachable at ${url}: ${(error as Error).message}\n${log()}`);
      await sleep(100);
    }
  }
}

/** Creates a cluster in a temp folder and starts PostgreSQL on a free loopback port. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      "PostgreSQL is not installed (initdb/postgres not found; .ci/run installs Debian's postgresql)",
    );
  const as = await serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndl-pg-'));
  const data = path.join(dir, 'data');
  try {
    if (as.uid !== undefined) fs.chownSync(dir, as.uid, as.gid!);
    await run(
      path.join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...as, cwd: dir, env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await getFreePort();
  // prettier-ignore
  const args = [
    '-D', data, '-p', String(port), '-k', dir, '-c', `listen_addresses=${LOCALHOST}`,
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
    '-c', 'max_connections=60', '-c', 'shared_buffers=16MB',
  ];
  const child = spawn(path.join(bin, 'postgres'), args, {
    ...as,
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid) trackChildPid(child.pid);
  let output = '';
  const capture = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-16_384);
  };
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      capture(Buffer.from(`spawn error: ${error.message}\n`));
      resolve();
    });
    child.once('exit', () => {
      if (child.pid) untrackChildPid(child.pid);
      resolve();
    });
  });
  const url = `postgres://postgres@${LOCALHOST}:${port}/postgres`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGINT is PostgreSQL's fast shutdown; terminateProcess's SIGTERM would wait for clients.
      child.kill('SIGINT');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) await terminateProcess(child, exited, 1000);
    }
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForConnection(url, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, url, pid: child.pid ?? -1, log: () => output, stop };
}
