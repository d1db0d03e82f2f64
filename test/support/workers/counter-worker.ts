/*
 * One OS process of the mutual-exclusion test: CALLERS concurrent loops, each doing ITERATIONS
 * non-atomic read-modify-writes of COUNTER_KEY (GET, yield to the event loop, SET +1) through a
 * data client separate from the lock engine's connection. With LOCKED=1 every update runs inside
 * engine.using(LOCK_KEY) and appends the fencing token to TOKENS_KEY (RPUSH) inside the section.
 *
 * Protocol: emits {type:'ready'}, waits for {type:'go'}, emits {type:'done', ...counts}, exits.
 */
import Redis from 'ioredis';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import { emit, onParentMessage, requiredEnv } from '../worker-io';

const url = requiredEnv('REDIS_URL');
const locked = requiredEnv('LOCKED') === '1';
const callers = Number(requiredEnv('CALLERS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const lockKey = requiredEnv('LOCK_KEY');
const counterKey = requiredEnv('COUNTER_KEY');
const tokensKey = requiredEnv('TOKENS_KEY');
// Which process ran each section, in section order (for per-process shares and grant runs).
const processesKey = process.env.PROCESSES_KEY;
const processIndex = process.env.PROCESS_INDEX ?? '0';
// A fixed lease for every lock (cohorts hand fixed-lease locks over too); unset: the watchdog.
// FAIR=1: the fair lock, with fair cohorts (default bounds) on the engine.
const fair = process.env.FAIR === '1';
const lockOptions = {
  ...(process.env.LEASE_MS && { leaseMs: Number(process.env.LEASE_MS) }),
  ...(fair && { fair: true }),
};

// Contention of 32 callers on one key can keep one caller waiting for a long time; this test is
// about exclusion, not latency, so waits are generous.
const engine = createLockEngine({
  redis: url,
  keyPrefix: requiredEnv('KEY_PREFIX'),
  defaults: { waitMs: 600_000 },
  ...(fair && { cohort: { fair: true } }),
});
const data = new Redis(url, { maxRetriesPerRequest: 3 });

let lost = 0;
let attempts = 0;
let acquisitions = 0;
let handedOver = 0;
engine.events.on('lost', () => lost++);
engine.events.on('acquired', (e) => {
  attempts += e.attempts;
  acquisitions++;
  if (e.handedOver) handedOver++;
});

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function increment(): Promise<void> {
  const value = Number((await data.get(counterKey)) ?? '0');
  await tick();
  await data.set(counterKey, String(value + 1));
}

async function caller(): Promise<number> {
  let done = 0;
  for (let i = 0; i < iterations; i++) {
    if (locked) {
      await engine.using(lockKey, lockOptions, async (lock) => {
        await increment();
        await data.rpush(tokensKey, String(lock.fencingToken));
        if (processesKey) await data.rpush(processesKey, processIndex);
        if (lock.signal.aborted) throw lock.signal.reason;
      });
    } else {
      await increment();
    }
    done++;
    sections++;
  }
  return done;
}

let sections = 0;
async function run(): Promise<void> {
  // Progress lines make a stalled run diagnosable from the parent's failure message.
  const progress = setInterval(() => emit({ type: 'progress', sections, stats: engine.stats() }), 5000);
  progress.unref();
  const counts = await Promise.all(Array.from({ length: callers }, () => caller()));
  clearInterval(progress);
  emit({
    type: 'done',
    sections: counts.reduce((a, b) => a + b, 0),
    acquisitions,
    attempts,
    lost,
    handedOver,
  });
}

const stop = onParentMessage((message: { type: string }) => {
  if (message.type !== 'go') return;
  stop();
  run()
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
      // stdin stays open (the parent's pipe), so leave explicitly once everything is closed.
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
