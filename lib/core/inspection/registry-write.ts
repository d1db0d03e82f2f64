import { LockRedisError } from '../errors';
import { withDeadline } from '../waiting/with-deadline';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';

/** The engines zset lives this long after its last write (its entries are pruned by score). */
export const ENGINES_TTL_MS = 24 * 3_600_000;
/** An engine entry is pruned this long after its record's expiry (a margin for client clocks). */
const PRUNE_MARGIN_MS = 60_000;

/** Whose record is written, and where. */
export interface RecordOwner {
  readonly target: InspectionTarget;
  readonly keys: InspectionKeys;
  readonly engineId: string;
}

/** One write of an engine's record. */
export type RecordWrite =
  { op: 'drop' } | { op: 'full' | 'diff'; set: string[]; removed: string[]; ttlMs: number };

/**
 * Writes one engine's registry record in one MULTI/EXEC (record and zset share a hash tag, so one
 * slot), on every node of `target`. Plain commands, no script: the registry is bookkeeping, not
 * lock logic. Resolves per node that answered: 1 written, 0 dropped, -1 a diff found no record (it
 * expired, or Redis lost it: the caller sends a full one). Rejects when no node answered.
 */
export async function writeRecord(
  { target, keys, engineId }: RecordOwner,
  write: RecordWrite,
  timeoutMs: number,
): Promise<number[]> {
  const record = keys.engine(engineId);
  const settled = await Promise.allSettled(
    target.gateways.map(async ({ client }) => {
      const tx = client.multi().exists(record);
      if (write.op === 'drop') {
        tx.zrem(keys.engines, engineId).del(record);
      } else {
        const now = Date.now();
        if (write.op === 'full') tx.del(record);
        if (write.set.length > 0) tx.hset(record, ...write.set);
        if (write.removed.length > 0) tx.hdel(record, ...write.removed);
        tx.pexpire(record, write.ttlMs)
          .zadd(keys.engines, now + write.ttlMs, engineId)
          .zremrangebyscore(keys.engines, '-inf', now - PRUNE_MARGIN_MS)
          .pexpire(keys.engines, ENGINES_TTL_MS);
      }
      const replies = await withDeadline(
        tx.exec(),
        timeoutMs,
        () => new LockRedisError(`Redis did not answer the registry write within ${timeoutMs} ms`),
      );
      const failed = replies?.find(([err]) => err)?.[0];
      if (!replies || failed) throw failed ?? new LockRedisError('the registry write was discarded');
      if (write.op === 'drop') return 0;
      return write.op === 'diff' && replies[0]![1] === 0 ? -1 : 1;
    }),
  );
  const ok = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (ok.length === 0) throw (settled[0] as PromiseRejectedResult).reason;
  return ok;
}
