/*
 * One OS process of the contention specs: LOOPS concurrent loops of ITERATIONS critical sections each.
 *   MODE=rw:  iteration j of loop i writes when (i + j) % WRITE_EVERY === 0, else reads; inside the
 *             section it RPUSHes `+<r|w>:<token>:<uid>` to LOG_KEY, holds HOLD_MS, RPUSHes `-...`.
 *             Redis serialises the pushes, so the list is one global timeline of the sections.
 *   MODE=sem: takes a permit of `limit: LIMIT`; inside, a script INCRs CUR_KEY and raises MAX_KEY to
 *             it, holds HOLD_MS, then DECRs CUR_KEY: MAX_KEY is the most holders ever seen at once.
 * Protocol: runOnGo (worker-io.ts); the report is {sections, failures}.
 * Env: REDIS_URL, KEY_PREFIX, KEY, MODE, LOOPS, ITERATIONS, HOLD_MS, and LOG_KEY / WRITE_EVERY
 * (rw) or LIMIT / CUR_KEY / MAX_KEY (sem).
 */
import Redis from 'ioredis';
import { randomUUID } from 'crypto';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import { requiredEnv, runOnGo } from '../worker-io';

const url = requiredEnv('REDIS_URL');
const key = requiredEnv('KEY');
const mode = requiredEnv('MODE');
const loops = Number(requiredEnv('LOOPS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const holdMs = Number(requiredEnv('HOLD_MS'));
// Contention, not latency, is under test: waits are generous.
const engine = createLockEngine({
  redis: url,
  keyPrefix: requiredEnv('KEY_PREFIX'),
  defaults: { waitMs: 600_000 },
});
const data = new Redis(url, { maxRetriesPerRequest: 3 });

const ENTER = `local n = redis.call('INCR', KEYS[1])
if n > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], n) end
return n`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function readWriteLoop(loop: number): Promise<void> {
  const logKey = requiredEnv('LOG_KEY');
  const writeEvery = Number(requiredEnv('WRITE_EVERY'));
  for (let j = 0; j < iterations; j++) {
    const m = (loop + j) % writeEvery === 0 ? 'w' : 'r';
    await engine.using(key, { mode: m === 'w' ? 'write' : 'read' }, async (lock) => {
      const entry = `${m}:${lock.fencingToken}:${randomUUID()}`;
      await data.rpush(logKey, `+${entry}`);
      await sleep(holdMs);
      await data.rpush(logKey, `-${entry}`);
    });
  }
}

async function semaphoreLoop(): Promise<void> {
  const limit = Number(requiredEnv('LIMIT'));
  const [cur, max] = [requiredEnv('CUR_KEY'), requiredEnv('MAX_KEY')];
  for (let j = 0; j < iterations; j++) {
    await engine.using(key, { limit }, async () => {
      await data.eval(ENTER, 2, cur, max);
      await sleep(holdMs);
      await data.decr(cur);
    });
  }
}

async function run(): Promise<{ sections: number; failures: number }> {
  let failures = 0;
  const results = await Promise.allSettled(
    Array.from({ length: loops }, (_, i) => (mode === 'rw' ? readWriteLoop(i) : semaphoreLoop())),
  );
  for (const r of results) {
    if (r.status === 'rejected') {
      failures++;
      process.stderr.write(`${String((r.reason as Error)?.stack ?? r.reason)}\n`);
    }
  }
  return { sections: loops * iterations, failures };
}

runOnGo({
  run,
  close: async () => {
    await engine.close();
    await data.quit().catch(() => data.disconnect());
  },
});
