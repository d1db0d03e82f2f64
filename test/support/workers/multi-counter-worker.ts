/*
 * One OS process of the multi-key exclusion test: CALLERS concurrent loops, each doing ITERATIONS
 * multi-key critical sections. Each section does a non-atomic read-modify-write (GET, yield, SET +1)
 * of the counter of every key it locked and appends that key's fencing token to its token list.
 *
 * PATTERN 'ab': every call locks KEYS (comma-separated) in the order given, or reversed when
 * REVERSED=1 (so two groups of processes name them in opposite orders). PATTERN 'random': every
 * call locks a random subset (1..all) of KEYS in random order.
 *
 * Topology: REDIS_URL, or CLUSTER_NODES (JSON startup nodes). Protocol: emits {type:'ready'}, waits
 * for {type:'go'}, emits {type:'done', sections, increments: {key: n}, timeouts, lost}, exits.
 */
import Redis, { Cluster } from 'ioredis';
import { LockNotAcquiredError } from '../../../lib/core/errors';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import { emit, onParentMessage, requiredEnv } from '../worker-io';

const callers = Number(requiredEnv('CALLERS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const keys = requiredEnv('KEYS').split(',');
const pattern = requiredEnv('PATTERN');
const reversed = process.env.REVERSED === '1';
const waitMs = Number(requiredEnv('WAIT_MS'));
const data = requiredEnv('DATA_PREFIX');
const clusterNodes = process.env.CLUSTER_NODES;

const connect = (): Redis | Cluster =>
  clusterNodes
    ? new Cluster(JSON.parse(clusterNodes) as { host: string; port: number }[], {
        redisOptions: { maxRetriesPerRequest: 3 },
      })
    : new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: 3 });
const lockClient = connect();
const client = connect();
const engine = createLockEngine({ redis: lockClient, keyPrefix: requiredEnv('KEY_PREFIX') });

let lost = 0;
let timeouts = 0;
let sections = 0;
const increments: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
engine.events.on('lost', () => lost++);

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function pick(): string[] {
  if (pattern === 'ab') return reversed ? [...keys].reverse() : keys;
  const shuffled = [...keys].sort(() => Math.random() - 0.5);
  return shuffled.slice(0, 1 + Math.floor(Math.random() * keys.length));
}

async function section(locked: string[], tokens: Readonly<Record<string, number>>): Promise<void> {
  const values = await Promise.all(locked.map((k) => client.get(`${data}:count:${k}`)));
  await tick();
  await Promise.all(
    locked.flatMap((k, i) => [
      client.set(`${data}:count:${k}`, String(Number(values[i] ?? '0') + 1)),
      client.rpush(`${data}:tokens:${k}`, String(tokens[k])),
    ]),
  );
  for (const k of locked) increments[k]!++;
}

async function caller(): Promise<void> {
  for (let i = 0; i < iterations; i++) {
    const chosen = pick();
    try {
      await engine.using(chosen, { waitMs }, async (lock) => {
        await section([...lock.keys], lock.fencingTokens);
        if (lock.signal.aborted) throw lock.signal.reason;
      });
      sections++;
    } catch (error) {
      if (!(error instanceof LockNotAcquiredError)) throw error;
      timeouts++; // a deadlock would show up here: every call is bounded by waitMs
    }
  }
}

async function run(): Promise<void> {
  const progress = setInterval(() => emit({ type: 'progress', sections, stats: engine.stats() }), 5000);
  progress.unref();
  await Promise.all(Array.from({ length: callers }, () => caller()));
  clearInterval(progress);
  emit({ type: 'done', sections, increments, timeouts, lost });
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
      await lockClient.quit().catch(() => lockClient.disconnect());
      await client.quit().catch(() => client.disconnect());
      process.exit();
    });
});

client
  .ping()
  .then(() => emit({ type: 'ready', pid: process.pid }))
  .catch((error: unknown) => {
    emit({ type: 'error', message: String(error) });
    process.exit(1);
  });
