/*
 * Mutual exclusion that reaches the data: 4 OS processes each do read-modify-writes (+1) of one
 * counter, every write through a fencing helper with the token read from the async context
 * (currentFence). PostgreSQL through the SQL helper and through TypeORM, and the Redis fenced store:
 * no update is lost, no write is refused, and the stored fence is the last grant's token.
 */
import type { FencedBackend } from './workers/protocol';
import { startFencedWriter, useFencingEnv, type FencedWriter } from './support/fencing-env';

const env = useFencingEnv();
const PROCESSES = 4;
const ROUNDS = 40;

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
      const key = `rmw-${backend}`;
      if (backend === 'redis') await env.store.set(`counter:${key}`, '0');
      else await env.pool.query('INSERT INTO counters (id, value) VALUES ($1, 0)', [key]);
      const writers: FencedWriter[] = [];
      try {
        for (let i = 0; i < PROCESSES; i++) writers.push(await startFencedWriter(env, `rmw-${backend}:`));
        for (const w of writers) w.send({ cmd: 'increment', key, backend, rounds: ROUNDS });
        const results = await Promise.all(writers.map((w) => w.next('incremented', 240_000)));
        const stored = await storedCounter(backend, key);
        expect(results.map((r) => r.stale)).toEqual(Array(PROCESSES).fill(0));
        expect(stored.value).toBe(PROCESSES * ROUNDS);
        const tokens = results.flatMap((r) => r.tokens);
        expect(new Set(tokens).size).toBe(PROCESSES * ROUNDS);
        expect(stored.fence).toBe(String(Math.max(...tokens)));
      } finally {
        await Promise.all(writers.map((w) => w.stop()));
      }
    });
  },
);
