/*
 * Fencing that reaches the data, under faults (in band: SIGSTOP and a Redis restart). A holder in
 * its own OS process writes through the fencing helpers to PostgreSQL (SQL helper, TypeORM) or the
 * Redis fenced store, on servers the lock's faults do not touch.
 *
 * 1. The holder is SIGSTOPped past its lease; a successor takes the lock and writes; the holder
 *    resumes and writes with its old token (having checked its signal just before it stopped): the
 *    storage refuses it with StaleFenceError and the successor's write stands.
 * 2. The same with the counter rolled back: the lock's counter ran 2 s ahead of the server clock
 *    (set by hand here; in life a clock that stepped back, or a failover to a replica with a slower
 *    clock), then Redis restarts without persistence, so the successor's first tokens are LOWER than
 *    the stored fence. Its writes are refused (safe, nothing written) until the clock floor of new
 *    tokens passes the stored fence; then a new grant writes, and the old holder stays refused.
 */
import Redis from 'ioredis';
import { createLockEngine, type LockEngine } from '../../lib/core/public';
import { fencedUpdate, fenceOf, RedisFencedStore, StaleFenceError, type Fence } from '../../lib/fencing';
import type { FencedBackend } from '../support/workers/fenced-writer-protocol';
import { startFencedWriter, useFencingEnv, type FencingEnv } from '../support/fencing-env';

const env = useFencingEnv();

async function successorWrite(
  e: FencingEnv,
  backend: FencedBackend,
  key: string,
  value: number,
  fence: Fence,
) {
  if (backend === 'redis') return new RedisFencedStore(e.store).set(`counter:${key}`, String(value), fence);
  await fencedUpdate((t, v) => e.pool.query(t, v), {
    dialect: 'postgres',
    table: 'counters',
    set: { value },
    where: { id: key },
    fence,
  });
}

async function stored(backend: FencedBackend, key: string): Promise<{ value: number; fence: string }> {
  if (backend === 'redis') {
    return {
      value: Number(await env.store.get(`counter:${key}`)),
      fence: (await env.store.hget(`counter:${key}:fence`, 'fence')) ?? '',
    };
  }
  const { rows } = await env.pool.query('SELECT value, lock_fence FROM counters WHERE id = $1', [key]);
  return { value: rows[0].value, fence: String(rows[0].lock_fence) };
}

async function createResource(backend: FencedBackend, key: string): Promise<void> {
  if (backend === 'redis') await env.store.set(`counter:${key}`, '0');
  else await env.pool.query('INSERT INTO counters (id, value) VALUES ($1, 0)', [key]);
}

describe.each<FencedBackend>(['sql', 'typeorm', 'redis'])(
  'a holder SIGSTOPped past its lease (%s)',
  (backend) => {
    it('has its late write refused with StaleFenceError while the successor’s write stands', async () => {
      const key = `pause-${backend}`;
      const prefix = `pause-${backend}:`;
      await createResource(backend, key);
      const holder = await startFencedWriter(env, prefix);
      const engine = createLockEngine({ redis: env.redis.url, keyPrefix: prefix });
      try {
        holder.send({ cmd: 'hold', key, leaseMs: 800 });
        const first = await holder.next('acquired');
        holder.send({ cmd: 'write', key, backend, value: 1 });
        expect(await holder.next('written')).toMatchObject({ accepted: true });

        holder.process.pause();
        const successor = await engine.acquire(key, { waitMs: 30_000 });
        expect(successor.fencingToken).toBeGreaterThan(first.token);
        await successorWrite(env, backend, key, 2, fenceOf(successor));

        holder.process.resume();
        holder.send({ cmd: 'write', key, backend, value: 3, checkSignal: false });
        const late = await holder.next('written');
        expect(late).toMatchObject({
          accepted: false,
          error: 'StaleFenceError',
          storedFence: String(successor.fencingToken),
        });
        expect(await stored(backend, key)).toEqual({ value: 2, fence: String(successor.fencingToken) });
        await holder.next('lost');
        expect(await successor.release()).toBe(true);
      } finally {
        await engine.close();
        await holder.stop();
      }
    });
  },
);

describe.each<FencedBackend>(['sql', 'redis'])(
  'the fence counter rolled back by a Redis restart (%s)',
  (backend) => {
    it('refuses every stale write, and new grants write again once their tokens pass the stored fence', async () => {
      const key = `rollback-${backend}`;
      const prefix = `rollback-${backend}:`;
      await createResource(backend, key);
      const admin = new Redis(env.redis.url, { maxRetriesPerRequest: 20 });
      const holder = await startFencedWriter(env, prefix);
      let engine: LockEngine | undefined;
      try {
        // The counter 2 s ahead of the server clock (its documented name: <prefix>{key}:fence).
        const [seconds, micros] = await admin.time();
        const ahead = Number(seconds) * 1e6 + Number(micros) + 2_000_000;
        await admin.set(`${prefix}{${key}}:fence`, String(ahead), 'PX', 86_400_000);
        holder.send({ cmd: 'hold', key, leaseMs: 10_000 });
        const first = await holder.next('acquired');
        expect(first.token).toBeGreaterThan(ahead);
        holder.send({ cmd: 'write', key, backend, value: 1 });
        expect(await holder.next('written')).toMatchObject({ accepted: true });

        holder.process.pause();
        await env.redis.restart();
        engine = createLockEngine({ redis: env.redis.url, keyPrefix: prefix });
        let refused = 0;
        let lowest = Infinity;
        let winner: number | undefined;
        for (let attempt = 0; attempt < 200 && winner === undefined; attempt++) {
          const lock = await engine.acquire(key, { waitMs: 30_000 });
          lowest = Math.min(lowest, lock.fencingToken);
          try {
            await successorWrite(env, backend, key, 2, fenceOf(lock));
            winner = lock.fencingToken;
          } catch (error) {
            expect(error).toBeInstanceOf(StaleFenceError);
            expect(await stored(backend, key)).toEqual({ value: 1, fence: String(first.token) });
            refused++;
            await new Promise((resolve) => setTimeout(resolve, 50));
          } finally {
            await lock.release();
          }
        }
        // The restart really rolled the counter back, and those grants were refused, not written.
        expect(lowest).toBeLessThan(first.token);
        expect(refused).toBeGreaterThan(0);
        expect(winner).toBeGreaterThan(first.token);
        expect(await stored(backend, key)).toEqual({ value: 2, fence: String(winner) });

        holder.process.resume();
        holder.send({ cmd: 'write', key, backend, value: 3, checkSignal: false });
        expect(await holder.next('written')).toMatchObject({ accepted: false, error: 'StaleFenceError' });
        expect(await stored(backend, key)).toEqual({ value: 2, fence: String(winner) });
        console.log(
          `${backend}: ${refused} writes of rolled-back grants refused, then token ${winner} wrote`,
        );
      } finally {
        await engine?.close();
        await holder.stop();
        admin.disconnect();
      }
    });
  },
);
