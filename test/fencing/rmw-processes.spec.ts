/*
 * Mutual exclusion that reaches the data: 4 OS processes each do read-modify-writes (+1) of one
 * counter, every write through a fencing helper with the token read from the async context
 * (currentFence). PostgreSQL through the SQL helper and through TypeORM, and the Redis fenced store:
 * no update is lost (the values read are 0, 1, … once each), no write is refused, tokens strictly
 * increase in the order the grants wrote, and the stored fence is the last grant's token. The same 4 processes serve every helper, one helper after
 * the other (spawning them is most of this spec's time).
 */
import type { FencedBackend } from '../support/workers/fenced-writer-protocol';
import { startFencedWriter, useFencingEnv, type FencedWriter } from '../support/fencing-env';

const PROCESSES = 4;
const ROUNDS = 40;

let writers: FencedWriter[] = [];

// Declared before useFencingEnv(): afterAll hooks run in the order declared, so the workers close
// (ending their connections) before the servers stop.
afterAll(async () => {
  await Promise.all(writers.map((w) => w.stop()));
}, 30_000);

const env = useFencingEnv();

beforeAll(async () => {
  const started = await Promise.allSettled(
    Array.from({ length: PROCESSES }, () => startFencedWriter(env, 'rmw:')),
  );
  writers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}, 120_000);

async function storedCounter(backend: FencedBackend, key: string): Promise<{ value: number; fence: string }> {
  if (backend === 'redis') {
    return {
      value: Number(await env.store.get(`counter:${key}`)),
      fence: (await env.store.hget(`counter:${key}:fence`, 'fence')) ?? '',
    };
  }
  const { rows } = await env.pool.query('SELECT value, lock_fence FROM counters WHERE id = $1', [key]);
  return { value: rows[0].value, fence: String(rows[0].lock_fence) };
}

describe.each<FencedBackend>(['sql', 'typeorm', 'redis'])(
  '4 processes, read-modify-write through %s',
  (backend) => {
    it(`loses no update in ${PROCESSES} × ${ROUNDS} fenced increments`, async () => {
      expect(writers).toHaveLength(PROCESSES);
      const key = `rmw-${backend}`;
      if (backend === 'redis') await env.store.set(`counter:${key}`, '0');
      else await env.pool.query('INSERT INTO counters (id, value) VALUES ($1, 0)', [key]);
      for (const w of writers) w.send({ cmd: 'increment', key, backend, rounds: ROUNDS });
      const results = await Promise.all(writers.map((w) => w.next('incremented', 240_000)));
      expect(results.map((r) => r.key)).toEqual(Array(PROCESSES).fill(key));
      const stored = await storedCounter(backend, key);
      expect(results.map((r) => r.stale)).toEqual(Array(PROCESSES).fill(0));
      expect(stored.value).toBe(PROCESSES * ROUNDS);
      // Every grant read what the one before it wrote: the values read are 0 … 159, once each, and
      // in that order (the order the grants held the lock) the tokens strictly increase.
      const grants = results
        .flatMap((r) => r.tokens.map((token, i) => ({ token, read: r.reads[i]! })))
        .sort((a, b) => a.read - b.read);
      expect(grants.map((g) => g.read)).toEqual(Array.from({ length: PROCESSES * ROUNDS }, (_, i) => i));
      const notIncreasing = grants.filter((g, i) => i > 0 && g.token <= grants[i - 1]!.token);
      expect(notIncreasing).toEqual([]);
      expect(stored.fence).toBe(String(grants[grants.length - 1]!.token));
    });
  },
);
