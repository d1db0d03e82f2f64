// Starts a throw-away redis-server on a free port for the smoke test (no persistence).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves `{ url, stop() }` once the server answers PING. */
export async function startRedisServer() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nest12-redis-'));
  const child = spawn(
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {}); // refused while the server starts: retried below
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.connect();
        if ((await client.ping()) === 'PONG') break;
      } catch (error) {
        if (attempt > 200 || child.exitCode !== null) throw new Error(`redis-server did not start: ${error}`);
        await sleep(50);
      }
    }
  } finally {
    client.disconnect();
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
