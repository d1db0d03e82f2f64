/*
 * The read-modify-write worker of the mutual-exclusion specs: one OS process of CALLERS concurrent
 * loops, each doing ITERATIONS critical sections (protocol: runOnGo in worker-io.ts). What a broken
 * lock would corrupt:
 *   MODE=counter (default)  each section locks KEYS (comma-separated; several: one multi-key call)
 *     and, through a data client separate from the engine's connection, does a non-atomic GET, yield,
 *     SET +1 of every locked key's counter `<DATA_PREFIX>:count:<key>` and RPUSHes the key's fencing
 *     token to `<DATA_PREFIX>:tokens:<key>` (and PROCESS_INDEX to `<DATA_PREFIX>:processes`).
 *     LOCKED=0 does the same without the lock: the control that shows the workload catches lost updates.
 *     PATTERN=ab (default) locks KEYS in the order given, reversed with REVERSED=1; PATTERN=random a
 *     random subset in random order.
 *   MODE=permits  each section takes 1..LIMIT permits of the semaphore KEYS[0] (limit LIMIT) and adds
 *     them to `<DATA_PREFIX>:in-use` (INCRBY, atomic across processes) for one turn of the event loop;
 *     the report's `peak` is the most in use it saw.
 * Env also: REDIS_URL or CLUSTER_NODES (JSON startup nodes), KEY_PREFIX, WAIT_MS (default 600 s: this
 * is about exclusion, not latency; a call that times out is counted, never a deadlock), LEASE_MS (a
 * fixed lease instead of the watchdog), FAIR=1 (the fair lock, with fair cohorts).
 * Report: sections, increments per key, acquisitions, attempts, handedOver, lost, timeouts, peak.
 */
import Redis, { Cluster } from 'ioredis';
import { LockNotAcquiredError } from '../../../lib/core/errors';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import { requiredEnv, runOnGo } from '../worker-io';

const callers = Number(requiredEnv('CALLERS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const keys = requiredEnv('KEYS').split(',');
const data = requiredEnv('DATA_PREFIX');
const mode = process.env.MODE ?? 'counter';
const locked = process.env.LOCKED !== '0';
const random = process.env.PATTERN === 'random';
const reversed = process.env.REVERSED === '1';
const limit = Number(process.env.LIMIT ?? '1');
const processIndex = process.env.PROCESS_INDEX;
const fair = process.env.FAIR === '1';
const lockOptions = {
  waitMs: Number(process.env.WAIT_MS ?? '600000'),
  ...(process.env.LEASE_MS && { leaseMs: Number(process.env.LEASE_MS) }),
  ...(fair && { fair: true }),
};

const clusterNodes = process.env.CLUSTER_NODES;
const connect = (): Redis | Cluster =>
  clusterNodes
    ? new Cluster(JSON.parse(clusterNodes) as { host: string; port: number }[], {
        redisOptions: { maxRetriesPerRequest: 3 },
      })
    : new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: 3 });
const lockClient = clusterNodes ? connect() : undefined;
const client = connect();
const engine = createLockEngine({
  redis: lockClient ?? requiredEnv('REDIS_URL'),
  keyPrefix: requiredEnv('KEY_PREFIX'),
  ...(fair && { cohort: { fair: true } }),
});

const report = {
  sections: 0,
  increments: Object.fromEntries(keys.map((k) => [k, 0])) as Record<string, number>,
  acquisitions: 0,
  attempts: 0,
  /** Acquisitions a holder of the same process handed over (cohorts): no Redis command. */
  handedOver: 0,
  lost: 0,
  timeouts: 0,
  peak: 0,
};
engine.events.on('lost', () => report.lost++);
engine.events.on('acquired', (e) => {
  report.attempts += e.attempts;
  report.acquisitions++;
  if (e.handedOver) report.handedOver++;
});

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function pick(): string[] {
  if (!random) return reversed ? [...keys].reverse() : keys;
  const shuffled = [...keys].sort(() => Math.random() - 0.5);
  return shuffled.slice(0, 1 + Math.floor(Math.random() * keys.length));
}

/** The read-modify-write of every locked key's counter, with its token recorded (absent without the lock). */
async function increment(
  lockedKeys: readonly string[],
  tokens?: Readonly<Record<string, number>>,
): Promise<void> {
  const values = await Promise.all(lockedKeys.map((k) => client.get(`${data}:count:${k}`)));
  await tick();
  await Promise.all(
    lockedKeys.flatMap((k, i) => [
      client.set(`${data}:count:${k}`, String(Number(values[i] ?? '0') + 1)),
      ...(tokens ? [client.rpush(`${data}:tokens:${k}`, String(tokens[k]))] : []),
    ]),
  );
  if (tokens && processIndex !== undefined) await client.rpush(`${data}:processes`, processIndex);
  for (const k of lockedKeys) report.increments[k]!++;
}

async function usePermits(seed: number, i: number): Promise<void> {
  const permits = 1 + ((seed + i * 3) % limit);
  await engine.using(keys[0]!, { ...lockOptions, limit, permits }, async (lock) => {
    report.peak = Math.max(report.peak, await client.incrby(`${data}:in-use`, permits));
    await tick();
    await client.decrby(`${data}:in-use`, permits);
    if (lock.signal.aborted) throw lock.signal.reason;
  });
}

async function caller(seed: number): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    try {
      if (mode === 'permits') await usePermits(seed, i);
      else if (!locked) await increment(keys);
      else if (keys.length === 1 && !random) {
        // One key: the single-key lock (mutex, or fair lock), not a multi-key call of one.
        await engine.using(keys[0]!, lockOptions, async (lock) => {
          await increment(keys, { [keys[0]!]: lock.fencingToken });
          if (lock.signal.aborted) throw lock.signal.reason;
        });
      } else {
        await engine.using(pick(), lockOptions, async (lock) => {
          await increment([...lock.keys], lock.fencingTokens);
          if (lock.signal.aborted) throw lock.signal.reason;
        });
      }
      report.sections++;
    } catch (error) {
      if (!(error instanceof LockNotAcquiredError)) throw error;
      report.timeouts++; // a deadlock would show up here: every call is bounded by waitMs
    }
  }
}

runOnGo({
  ready: () => client.ping(),
  run: async () => {
    await Promise.all(Array.from({ length: callers }, (_, i) => caller(i + process.pid)));
    return report;
  },
  progress: () => ({ sections: report.sections, stats: engine.stats() }),
  close: async () => {
    await engine.close();
    for (const c of [client, lockClient]) await c?.quit().catch(() => c.disconnect());
  },
});
