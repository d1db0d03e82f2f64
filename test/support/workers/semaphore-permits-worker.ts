/*
 * One OS process of the semaphore permits test: CALLERS loops of ITERATIONS sections on SEM_KEY
 * (limit LIMIT), each asking for 1..LIMIT permits. Inside a section it adds its permits to the
 * IN_USE counter in Redis (INCRBY, atomic across processes), notes the total it saw, yields, and
 * takes them back (DECRBY). Emits {type:'ready'}, waits for {type:'go'}, emits {type:'done', peak,
 * sections}, exits.
 */
import Redis from 'ioredis';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import { emit, onParentMessage, requiredEnv } from '../worker-io';

const url = requiredEnv('REDIS_URL');
const callers = Number(requiredEnv('CALLERS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const limit = Number(requiredEnv('LIMIT'));
const key = requiredEnv('SEM_KEY');
const inUse = requiredEnv('IN_USE');
const engine = createLockEngine({ redis: url, keyPrefix: requiredEnv('KEY_PREFIX') });
const data = new Redis(url, { maxRetriesPerRequest: 3 });

let peak = 0;
let sections = 0;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function caller(seed: number): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    const permits = 1 + ((seed + i * 3) % limit);
    await engine.using(key, { limit, permits, waitMs: 120_000 }, async (lock) => {
      peak = Math.max(peak, await data.incrby(inUse, permits));
      await tick();
      await data.decrby(inUse, permits);
      if (lock.signal.aborted) throw lock.signal.reason;
    });
    sections++;
  }
}

const stop = onParentMessage((message: { type: string }) => {
  if (message.type !== 'go') return;
  stop();
  Promise.all(Array.from({ length: callers }, (_, i) => caller(i + process.pid)))
    .then(() => emit({ type: 'done', peak, sections }))
    .catch((error: unknown) => {
      emit({
        type: 'error',
        message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      process.exitCode = 1;
    })
    .finally(async () => {
      await engine.close();
      await data.quit().catch(() => data.disconnect());
      process.exit();
    });
});

data
  .ping()
  .then(() => emit({ type: 'ready', pid: process.pid }))
  .catch((error: unknown) => {
    emit({ type: 'error', message: String(error) });
    process.exit(1);
  });
