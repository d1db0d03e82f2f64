/*
 * A lock holder in its own OS process, driven by the parent test over stdin:
 *   {type:'acquire', id, key, options, holdMs?}  takes the lock; RPUSHes `id` to ORDER_KEY inside
 *       the critical section (so the list is the grant order), emits {type:'granted', id, token};
 *       releases after holdMs when given (emits {type:'released', id, result}), else waits for
 *   {type:'release', id}.
 * A lost lock emits {type:'lost', id, reason}; a failed acquire {type:'failed', id, name, message}.
 * {type:'ping', id} emits {type:'pong', id}: every acquire sent before it has joined its local queue.
 * Env: REDIS_URL, KEY_PREFIX, ORDER_KEY; optional WATCHDOG_LEASE_MS, RENEW_EVERY_MS, BACKOFF_MAX_MS,
 * FAIR_COHORTS=1 (fair cohorts, with a time budget no busy machine runs out of).
 */
import Redis from 'ioredis';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import type { LockHandle } from '../../../lib/core/engine/lock-grant';
import type { LockOptions } from '../../../lib/core/options/lock-options';
import { emit, onParentMessage, requiredEnv } from '../../support/worker-io';

const optionalNumber = (name: string): number | undefined =>
  process.env[name] ? Number(process.env[name]) : undefined;

const watchdogLeaseMs = optionalNumber('WATCHDOG_LEASE_MS');
const backoffMax = optionalNumber('BACKOFF_MAX_MS');
const engine = createLockEngine({
  redis: requiredEnv('REDIS_URL'),
  keyPrefix: requiredEnv('KEY_PREFIX'),
  ...(watchdogLeaseMs ? { watchdogLeaseMs, renewEveryMs: optionalNumber('RENEW_EVERY_MS') } : {}),
  ...(backoffMax ? { backoff: { initialMs: 1, maxMs: backoffMax } } : {}),
  ...(process.env.FAIR_COHORTS === '1' ? { cohort: { passes: 32, budgetMs: 60_000, fair: true } } : {}),
});
const data = new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: 3 });
const orderKey = requiredEnv('ORDER_KEY');
const held = new Map<string, LockHandle>();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function release(id: string): Promise<void> {
  const handle = held.get(id);
  if (!handle) return;
  held.delete(id);
  emit({ type: 'released', id, result: await handle.release() });
}

async function acquire(id: string, key: string, options: LockOptions, holdMs?: number): Promise<void> {
  try {
    const handle = await engine.acquire(key, { waitMs: 120_000, ...options });
    held.set(id, handle);
    handle.signal.addEventListener('abort', () =>
      emit({ type: 'lost', id, reason: handle.signal.reason?.reason }),
    );
    await data.rpush(orderKey, id);
    emit({ type: 'granted', id, token: handle.fencingToken });
    if (holdMs !== undefined) {
      await sleep(holdMs);
      await release(id);
    }
  } catch (err) {
    const e = err as Error;
    emit({ type: 'failed', id, name: e.name, message: e.message });
  }
}

onParentMessage(
  (message: { type: string; id: string; key: string; options?: LockOptions; holdMs?: number }) => {
    if (message.type === 'acquire')
      void acquire(message.id, message.key, message.options ?? {}, message.holdMs);
    if (message.type === 'release') void release(message.id);
    if (message.type === 'ping') emit({ type: 'pong', id: message.id });
  },
);

const shutdown = async (): Promise<void> => {
  await engine.close();
  await data.quit().catch(() => data.disconnect());
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown());
emit({ type: 'ready', pid: process.pid });
