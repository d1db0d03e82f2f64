/*
 * SIGTERM, as a container platform stops a replica: two replicas of a real Nest app, each its own OS
 * process (test/support/workers/shutdown-replica-worker.ts, `app.enableShutdownHooks()`), on Express
 * and on Fastify. Replica A holds three locks inside slow requests (and has a request of its own
 * waiting behind one of them); replica B has a request waiting for each of the three. A keep-alive
 * client (an http.Agent with keepAlive, as a load balancer or a service mesh keeps its connections)
 * sends them all. Then A gets SIGTERM. Asserted:
 *
 * - every request that committed (its critical section wrote its id to Redis) was answered 201, and
 *   every request A or B had in flight committed: Nest closes HTTP first, lets the requests in flight
 *   finish (the waiter in A included), then closes the lock service;
 * - B is granted each key after A released it, within 10 s (a liveness bound for a loaded machine:
 *   without a release B would wait out the 30 s watchdog lease);
 * - no lock key is left in Redis;
 * - A exits, with the README's ConnectionCloseOnShutdown provider in the app.
 *
 * Without that provider, Fastify's close waits for the client's keep-alive connection (Fastify's
 * keepAliveTimeout is 72 s): the last spec shows A still running, its lock service not yet closing,
 * after every answer arrived, and A exiting once the client lets go of its sockets.
 *
 * Figures (SIGTERM → exit, release in A → grant in B) go to .results/shutdown-sigterm.json.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type Redis from 'ioredis';
import { epochMs, round1 } from '../support/clock';
import { PLATFORMS, uniquePrefix, type Platform } from '../support/nest-env';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { spawnWorker, workerPath, type WorkerProcess } from '../support/spawn-worker';

jest.setTimeout(120_000);

const KEYS = ['k1', 'k2', 'k3'];
/** Long enough for B's requests to arrive and wait on a loaded machine before A gets its signal. */
const HOLD_MS = 4_000;
/** How long B may take to get a key after A released it: far above a hand-off, far below the lease. */
const HANDOFF_BOUND_MS = 10_000;

interface Message {
  type: string;
  key?: string;
  at?: number;
  port?: number;
}

interface Answer {
  id: string;
  status: number;
  connection?: string;
  error?: string;
}

let server: RedisServerProcess;
let probe: Redis;
const workers: WorkerProcess<Message>[] = [];
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  server = await startRedis();
  probe = redisClient(server.url);
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop(2_000)));
  await closeClient(probe);
  await server?.stop();
  const dir = path.resolve(__dirname, '..', '..', '.results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'shutdown-sigterm.json'), JSON.stringify(figures, null, 2) + '\n');
});

async function replica(platform: Platform, prefix: string, closeKeepAlive: boolean) {
  const worker = spawnWorker<Message>(workerPath('shutdown-replica-worker.ts'), {
    env: {
      REDIS_URL: server.url,
      PREFIX: prefix,
      PLATFORM: platform,
      HOLD_MS: String(HOLD_MS),
      CLOSE_KEEP_ALIVE: closeKeepAlive ? '1' : '0',
    },
  });
  workers.push(worker);
  const { port } = await worker.waitForMessage((m) => m.type === 'listening', 60_000);
  return { worker, port: port! };
}

/** POST /hold/:key with `x-request-id: id` through `agent`; resolves with the answer or the socket error. */
function post(agent: http.Agent, port: number, key: string, id: string): Promise<Answer> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/hold/${key}`,
        headers: { 'x-request-id': id },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ id, status: response.statusCode ?? 0, connection: response.headers.connection }),
        );
      },
    );
    request.on('error', (error) => resolve({ id, status: 0, error: String(error) }));
    request.end();
  });
}

/** The first `type` event of the lock `job:<key>` in `worker` (events name the lock key). */
const seen = (worker: WorkerProcess<Message>, type: string, key: string) =>
  worker.waitForMessage((m) => m.type === type && m.key === `job:${key}`, 30_000);

/** A holds every key inside a request, with one more request of its own waiting for k1; B waits for each. */
async function holdAndQueue(a: { worker: WorkerProcess<Message>; port: number }, b: typeof a) {
  const agentA = new http.Agent({ keepAlive: true });
  const agentB = new http.Agent({ keepAlive: true });
  const answers: Promise<Answer>[] = [];
  for (const key of KEYS) answers.push(post(agentA, a.port, key, `a-${key}`));
  for (const key of KEYS) await seen(a.worker, 'acquired', key);
  answers.push(post(agentA, a.port, 'k1', 'a-k1-waiter'));
  for (const key of KEYS) answers.push(post(agentB, b.port, key, `b-${key}`));
  return { agentA, agentB, answers };
}

const lockKeys = (prefix: string) => probe.keys(`${prefix}lock:*}:m`);

describe.each(PLATFORMS)('SIGTERM to a replica on %s holding locks inside slow requests', (platform) => {
  it('answers every committed request, hands each lock to the other replica, leaves none, and exits', async () => {
    const prefix = uniquePrefix(`sigterm-${platform}`);
    const [a, b] = await Promise.all([replica(platform, prefix, true), replica(platform, prefix, true)]);
    const { agentA, agentB, answers } = await holdAndQueue(a, b);
    // B's requests and A's own waiter are waiting (each found its key busy).
    await Promise.all([
      seen(a.worker, 'contended', 'k1'),
      ...KEYS.map((key) => seen(b.worker, 'contended', key)),
    ]);
    const sigtermAt = epochMs();
    a.worker.kill('SIGTERM');
    const exit = await a.worker.exited;
    const exitMs = epochMs() - sigtermAt;
    const answered = await Promise.all(answers);
    agentA.destroy();
    agentB.destroy();

    const commits = new Set(await probe.lrange(`${prefix}commits`, 0, -1));
    // Every request committed, and every committed request was answered 201.
    expect(answered.filter((answer) => !commits.has(answer.id))).toEqual([]);
    expect(answered.filter((answer) => answer.status !== 201)).toEqual([]);
    // A's answers, all in flight at the signal, told the client to drop the connection.
    expect(answered.filter((x) => x.id.startsWith('a-') && x.connection !== 'close')).toEqual([]);

    // B got each key from A's release, well before A's lease could have run out: the hand-off is B's
    // grant less the end of A's last critical section on that key before it (A releases right after).
    const handoffs: Record<string, number> = {};
    for (const key of KEYS) {
      const lock = `job:${key}`;
      const grantedInB = b.worker.messages.find((m) => m.type === 'acquired' && m.key === lock);
      expect(grantedInB?.at).toEqual(expect.any(Number));
      const endedInA = a.worker.messages
        .filter((m) => m.type === 'section-end' && m.key === lock && m.at! <= grantedInB!.at!)
        .at(-1);
      expect(endedInA?.at).toEqual(expect.any(Number));
      handoffs[key] = round1(grantedInB!.at! - endedInA!.at!);
    }
    expect(Object.values(handoffs).filter((ms) => ms > HANDOFF_BOUND_MS)).toEqual([]);

    // A went through Nest's shutdown (HTTP first, then the lock service) and ended by the signal.
    const steps = a.worker.messages.map((m) => m.type).filter((t) => /sigterm|closing/.test(t));
    expect(steps).toEqual(['sigterm', 'http-closing', 'locks-closing']);
    expect(exit).toEqual(expect.objectContaining({ signal: 'SIGTERM' }));
    expect(await lockKeys(prefix)).toEqual([]);

    const lastSectionInA = Math.max(
      ...a.worker.messages.filter((m) => m.type === 'section-end').map((m) => m.at!),
    );
    figures[platform] = {
      exitAfterSigtermMs: round1(exitMs),
      exitAfterLastSectionMs: round1(sigtermAt + exitMs - lastSectionInA),
      handoffMs: handoffs,
      answers: answered.length,
    };
  });
});

describe('SIGTERM to a replica on fastify without ConnectionCloseOnShutdown', () => {
  it("waits for the client's keep-alive connection before closing the lock service and exiting", async () => {
    const prefix = uniquePrefix('sigterm-keepalive');
    const a = await replica('fastify', prefix, false);
    const agent = new http.Agent({ keepAlive: true });
    const answer = post(agent, a.port, 'k1', 'a-k1');
    await seen(a.worker, 'acquired', 'k1');
    a.worker.kill('SIGTERM');
    await expect(answer).resolves.toEqual({ id: 'a-k1', status: 201, connection: 'keep-alive' });
    await a.worker.waitForMessage((m) => m.type === 'http-closing', 30_000);
    // The answer arrived, yet HTTP is not closed: Fastify's close waits for the client's idle
    // keep-alive socket (its keepAliveTimeout is 72 s). 3 s of it is seen here.
    await expect(a.worker.waitForMessage((m) => m.type === 'locks-closing', 3_000)).rejects.toThrow(
      /no matching message/,
    );
    expect(a.worker.running).toBe(true);
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
    // The client lets go: the close ends, the lock service closes, the process exits.
    agent.destroy();
    await a.worker.waitForMessage((m) => m.type === 'locks-closing', 30_000);
    expect(await a.worker.exited).toEqual(expect.objectContaining({ signal: 'SIGTERM' }));
    expect(await lockKeys(prefix)).toEqual([]);
  });
});
