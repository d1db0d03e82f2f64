/*
 * Mutual exclusion across OS processes that use different clients on the same lock: an ioredis, a
 * node-redis (6 and 5) and a GLIDE process (and an iovalkey one), 2 callers each, doing a
 * read-modify-write of one counter with a fenced write. Every update must land (0 lost updates, 0
 * writes refused by the fence), and the tokens in write order must strictly increase. The backoff
 * is 5 s: each process reports how many of its sections waited that long (`stalls`: a wait only the
 * safety net ended), printed for the report, not asserted (no wall-clock bounds on this machine).
 * It found GLIDE waiters stalling for a whole backoff (fixed in the GLIDE door: ordered, lingering
 * unsubscribes); all families show 0 since.
 */
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { spawnWorker, workerPath, type WorkerProcess } from '../support/spawn-worker';
import { FAMILIES } from '../support/client-families';

jest.setTimeout(240_000);

const WORKER = workerPath('rmw-worker.ts');
const CALLERS = 2;
const ITERATIONS = 40;

let server: RedisServerProcess;
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await server?.stop();
});

interface Done {
  type: 'done';
  stalls: number;
  family: string;
  lost: number;
  attempts: number;
  acquisitions: number;
  refused: number;
}

it('keeps every update and orders the tokens, with processes on ioredis, node-redis, GLIDE and iovalkey', async () => {
  const env = {
    REDIS_URL: server.url,
    KEY_PREFIX: 'mix:',
    CALLERS: String(CALLERS),
    ITERATIONS: String(ITERATIONS),
    LOCK_KEY: 'counter-lock',
    COUNTER_KEY: 'mix-data:counter',
    TOKENS_KEY: 'mix-data:tokens',
    BACKOFF_MS: '5000',
  };
  workers = FAMILIES.map((family) => spawnWorker(WORKER, { env: { ...env, FAMILY: family } }));
  await Promise.all(
    workers.map((w) => w.waitForMessage((m) => m.type === 'ready' || m.type === 'error', 120_000)),
  );
  for (const w of workers) expect(w.messages.find((m) => m.type === 'error')).toBeUndefined();
  for (const w of workers) w.send({ type: 'go' });
  const results = await Promise.all(
    workers.map((w) => w.waitForMessage<Done>((m) => m.type === 'done' || m.type === 'error', 200_000)),
  );
  for (const r of results) expect(r.type).toBe('done');
  // For the report (not asserted: no wall-clock bounds on this shared machine).
  console.log(
    JSON.stringify(
      results.map(({ family, attempts, acquisitions, stalls }) => ({
        family,
        attempts,
        acquisitions,
        stalls,
      })),
    ),
  );

  const admin = redisClient(server.url);
  try {
    const total = FAMILIES.length * CALLERS * ITERATIONS;
    expect(Number(await admin.get('mix-data:counter'))).toBe(total); // 0 lost updates
    const tokens = (await admin.lrange('mix-data:tokens', 0, -1)).map((t) => Number(t.split(':')[1]));
    expect(tokens).toHaveLength(total);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    const byFamily = new Set((await admin.lrange('mix-data:tokens', 0, -1)).map((t) => t.split(':')[0]));
    expect([...byFamily].sort()).toEqual([...FAMILIES].sort());
    for (const r of results) {
      expect(r.refused).toBe(0);
      expect(r.lost).toBe(0);
      expect(r.acquisitions).toBe(CALLERS * ITERATIONS);
    }
  } finally {
    await closeClient(admin);
  }
});
