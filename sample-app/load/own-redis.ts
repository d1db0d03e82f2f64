import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { guardAgainstOrphan } from './orphan-guard';

/** A redis-server the demo started for itself. */
export interface OwnRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGTERM, SIGKILL after a grace period; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

const BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const HOST = '127.0.0.1';

/**
 * Starts `redis-server` on a free loopback port with no persistence, in a temporary directory,
 * and resolves once it answers PING. Retries with another port if the chosen one was taken
 * in between.
 */
export async function startOwnRedis(): Promise<OwnRedis> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(await freePort());
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= 5) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function launch(port: number): Promise<OwnRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'ndl-demo-redis-'));
  // prettier-ignore
  const args = ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no',
    '--daemonize', 'no', '--protected-mode', 'no', '--dir', dir, '--maxclients', '10000'];
  // Detached: a Ctrl-C reaches us and the app workers, which still need Redis to release their locks.
  const child = spawn(BIN, args, { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const capture = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-8192));
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const guard = child.pid ? guardAgainstOrphan(child.pid) : undefined;
  const cleanup = (): void => {
    guard?.release();
    rmSync(dir, { recursive: true, force: true });
  };
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      cleanup();
    })());

  const polling = new AbortController();
  let ready: 'ready' | 'exited' | Error;
  try {
    ready = await Promise.race([
      waitForPong(port, 15_000, polling.signal).then(() => 'ready' as const),
      exited.then(() => 'exited' as const),
      spawnError,
    ]);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    polling.abort();
  }
  if (ready === 'ready') return { url: `redis://${HOST}:${port}`, port, pid: child.pid!, stop };
  await stop();
  if (ready instanceof Error) {
    const missing = (ready as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? `"${BIN}" was not found on PATH. Install Redis (6.2 or newer) or set REDIS_URL to a running server.`
        : `could not start ${BIN}: ${ready.message}`,
    );
  }
  if (/address already in use/i.test(output)) throw new PortTakenError(output);
  throw new Error(`${BIN} exited during start-up:\n${output.trim()}`);
}

/** A port the OS says is free right now (listen on 0, read it, close). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls PING over a raw socket until +PONG, for at most `timeoutMs`. */
async function waitForPong(port: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    if (await pingOnce(port)) return;
    await sleep(50);
  }
  if (signal.aborted) return;
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: HOST });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
