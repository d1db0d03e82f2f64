/*
 * A replica that holds and waits for locks in its own OS process, driven over stdin:
 *   {type:'acquire', id, key, options, reenter?}  takes the lock (and re-enters it `reenter` times),
 *       emits {type:'granted', id, token}; a waiting acquire emits it when it gets the lock
 *   {type:'write', id, record}   a fenced write with the lock's token: {type:'written', id, ok, last}
 *   {type:'release', id}         releases every hold: {type:'released', id, result}
 * A lost lock emits {type:'lost', id, reason}. Env: REDIS_URL (or CLUSTER_NODES), KEY_PREFIX, APP.
 */
import Redis, { Cluster } from 'ioredis';
import { createLockEngine } from '../../../lib/core/topology/create-lock-engine';
import type { LockHandle } from '../../../lib/core/engine/lock-grant';
import type { LockOptions } from '../../../lib/core/options/lock-options';
import { emit, onParentMessage, requiredEnv } from '../../support/worker-io';
import { FENCED_WRITE_LUA } from '../support/fenced-write';

const nodes = process.env.CLUSTER_NODES;
const redis = nodes
  ? new Cluster(nodes.split(',').map((n) => ({ host: '127.0.0.1', port: Number(n) })))
  : new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: 3 });
const engine = createLockEngine({ redis, keyPrefix: requiredEnv('KEY_PREFIX'), app: requiredEnv('APP') });
const held = new Map<string, LockHandle[]>();

async function acquire(id: string, key: string, options: LockOptions, reenter = 0): Promise<void> {
  try {
    const handle = await engine.acquire(key, { waitMs: 120_000, ...options });
    const holds = [handle];
    for (let i = 0; i < reenter; i++)
      holds.push(await engine.runInLock(handle, () => engine.acquire(key, options)));
    held.set(id, holds);
    handle.signal.addEventListener('abort', () =>
      emit({ type: 'lost', id, reason: handle.signal.reason?.reason }),
    );
    emit({ type: 'granted', id, token: handle.fencingToken });
  } catch (err) {
    emit({ type: 'failed', id, message: (err as Error).message });
  }
}

async function write(id: string, record: string): Promise<void> {
  const token = held.get(id)?.[0]?.fencingToken ?? 0;
  const reply = (await redis.eval(FENCED_WRITE_LUA, 1, record, String(token))) as [number, string];
  emit({ type: 'written', id, ok: reply[0] === 1, last: Number(reply[1]), token });
}

async function release(id: string): Promise<void> {
  const holds = held.get(id) ?? [];
  held.delete(id);
  const results = [];
  for (const h of holds.reverse()) results.push(await h.release());
  emit({ type: 'released', id, result: results.every(Boolean) });
}

onParentMessage(
  (m: { type: string; id: string; key: string; options?: LockOptions; reenter?: number; record: string }) => {
    if (m.type === 'acquire') void acquire(m.id, m.key, m.options ?? {}, m.reenter);
    if (m.type === 'write') void write(m.id, m.record);
    if (m.type === 'release') void release(m.id);
  },
);

process.on('SIGTERM', () => {
  void engine
    .close()
    .then(() => redis.quit())
    .catch(() => redis.disconnect())
    .finally(() => process.exit(0));
});
emit({ type: 'ready', pid: process.pid, engine: engine.engineId });
