// What the Jest (ESM mode) and Vitest tests of the Nest 12 app check, written once: each step returns
// what it saw and the test files assert it with their own runner's `expect`.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';
import { DistributedLockService } from 'nestjs-distributed-lock';
import { startSmokeApp } from './smoke-app.mjs';

/** GET without keep-alive, so that no socket outlives the request. */
export function get(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

/** The app started with forRoot({ redis, keyPrefix: 'nest12:' }). */
export async function startApp(redisUrl) {
  return startSmokeApp(redisUrl);
}

/** The decorated route answers 200, then 423 (with Retry-After) while another holder has the key. */
export async function routeWhileHeld(app, url, id) {
  const locks = app.get(DistributedLockService);
  const free = await get(`${url}/seckill/${id}`);
  const held = await locks.acquire(`seckill:${id}`, { leaseMs: 10_000 });
  let busy;
  try {
    busy = await get(`${url}/seckill/${id}`);
  } finally {
    await held.release();
  }
  return { free, busy, after: await get(`${url}/seckill/${id}`) };
}

/** service.using() and current() inside it. */
export async function usingAndCurrent(app) {
  const locks = app.get(DistributedLockService);
  return locks.using('manual', {}, async (lock) => ({
    fencingToken: lock.fencingToken,
    sameAsCurrent: locks.current('manual') === lock,
  }));
}

/** Closes the app while it holds a lock: the key must be gone from Redis afterwards. */
export async function closeWhileHolding(app, redisUrl) {
  const locks = app.get(DistributedLockService);
  await locks.acquire('left-open');
  await app.close();
  const client = new Redis(redisUrl);
  try {
    return { keyLeft: await client.exists('nest12:left-open') };
  } finally {
    client.disconnect();
  }
}

/** Starts, uses and closes the app in a child process; resolves its exit code (0 = nothing left open). */
export function exitsByItself(redisUrl) {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('./exit-check.mjs', import.meta.url)), redisUrl],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
}
