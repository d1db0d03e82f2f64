/*
 * One OS process of the mixed-client mutual-exclusion spec: its lock engine runs on a client of
 * FAMILY (ioredis, node-redis6, glide, ...) passed in as a user would. CALLERS loops each do
 * ITERATIONS read-modify-writes of COUNTER_KEY under engine.using(LOCK_KEY): GET, yield, then a
 * fenced write (a Lua check-and-set on the data server: refused when the token is not above the last
 * one written, as storage-side fencing does), and append the token to TOKENS_KEY. The backoff
 * (BACKOFF_MS, the safety net) is long, so a wait it ends shows as a stall in `stalls` (sections
 * that waited longer than it): wake-ups by message keep that at 0.
 *
 * Protocol: emits {type:'ready'}, waits for {type:'go'}, emits {type:'done', ...counts}, exits.
 */
import Redis from 'ioredis';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import { emit, onParentMessage, requiredEnv } from '../worker-io';
import { ClientFactory, type Family } from '../client-families';

const url = requiredEnv('REDIS_URL');
const family = requiredEnv('FAMILY') as Family;
const callers = Number(requiredEnv('CALLERS'));
const iterations = Number(requiredEnv('ITERATIONS'));
const lockKey = requiredEnv('LOCK_KEY');
const counterKey = requiredEnv('COUNTER_KEY');
const fenceKey = `${counterKey}:fence`;
const tokensKey = requiredEnv('TOKENS_KEY');
const backoffMs = Number(requiredEnv('BACKOFF_MS'));

/** SET counter only when the token is above the last one written (KEYS: counter, fence). */
const FENCED_SET = `
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

async function main(): Promise<void> {
  const clients = new ClientFactory(family);
  const client = await clients.standalone(url);
  const engine = createLockEngine({
    redis: client as never,
    keyPrefix: requiredEnv('KEY_PREFIX'),
    backoff: { initialMs: backoffMs, maxMs: backoffMs },
    defaults: { waitMs: 600_000 },
  });
  const data = new Redis(url, { maxRetriesPerRequest: 3 });
  let lost = 0;
  let attempts = 0;
  let acquisitions = 0;
  let refused = 0;
  let stalls = 0;
  engine.events.on('lost', () => lost++);
  engine.events.on('acquired', (e) => {
    attempts += e.attempts;
    acquisitions++;
  });
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  const caller = async (): Promise<void> => {
    for (let i = 0; i < iterations; i++) {
      const asked = performance.now();
      await engine.using(lockKey, {}, async (lock) => {
        if (performance.now() - asked >= backoffMs) stalls++;
        const value = Number((await data.get(counterKey)) ?? '0');
        await tick();
        const ok = await data.eval(FENCED_SET, 2, counterKey, fenceKey, lock.fencingToken, value + 1);
        if (ok !== 1) refused++;
        await data.rpush(tokensKey, `${family}:${lock.fencingToken}`);
      });
    }
  };
  emit({ type: 'ready' });
  await new Promise<void>((resolve) => {
    const stop = onParentMessage((m: { type: string }) => {
      if (m.type === 'go') {
        stop();
        resolve();
      }
    });
  });
  const started = performance.now();
  await Promise.all(Array.from({ length: callers }, () => caller()));
  const ms = Math.round(performance.now() - started);
  emit({ type: 'done', family, lost, attempts, acquisitions, refused, stalls, ms });
  await engine.close();
  await clients.closeClients();
  data.disconnect();
}

main().catch((err: unknown) => {
  emit({ type: 'error', message: String(err instanceof Error ? err.stack : err) });
  process.exit(1);
});
