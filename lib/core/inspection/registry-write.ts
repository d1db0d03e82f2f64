import { LockRedisError } from '../errors';
import { answers, askNodes, firstError } from '../redis/node-fanout';
import type { RedisArgs } from '../redis/redis-door';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import type { Runtime } from '../runtime/runtime';

/** The engines zset lives this long after its last write (its entries are pruned by score). */
export const ENGINES_TTL_MS = 24 * 3_600_000;
/** An engine entry is pruned this long after its record's expiry (a margin for client clocks). */
const PRUNE_MARGIN_MS = 60_000;

/** Whose record is written, and where. */
export interface RecordOwner {
  readonly target: InspectionTarget;
  readonly keys: InspectionKeys;
  readonly engineId: string;
  /** Its wall clock scores the engines zset. */
  readonly runtime: Runtime;
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
  { target, keys, engineId, runtime }: RecordOwner,
  write: RecordWrite,
  timeoutMs: number,
): Promise<number[]> {
  const record = keys.engine(engineId);
  const commands: RedisArgs[] = [['EXISTS', record]];
  if (write.op === 'drop') {
    commands.push(['ZREM', keys.engines, engineId], ['DEL', record]);
  } else {
    const now = runtime.wallNow();
    if (write.op === 'full') commands.push(['DEL', record]);
    if (write.set.length > 0) commands.push(['HSET', record, ...write.set]);
    if (write.removed.length > 0) commands.push(['HDEL', record, ...write.removed]);
    commands.push(
      ['PEXPIRE', record, write.ttlMs],
      ['ZADD', keys.engines, now + write.ttlMs, engineId],
      ['ZREMRANGEBYSCORE', keys.engines, '-inf', now - PRUNE_MARGIN_MS],
      ['PEXPIRE', keys.engines, ENGINES_TTL_MS],
    );
  }
  const ballot = await askNodes(target.gateways, async (gateway) => {
    const replies = await gateway.ask(
      (door) => door.transaction(commands, record),
      timeoutMs,
      () => new LockRedisError(`Redis did not answer the registry write within ${timeoutMs} ms`),
    );
    const failed = replies.find((reply) => reply instanceof Error);
    if (failed) throw failed;
    if (write.op === 'drop') return 0;
    return write.op === 'diff' && Number(replies[0]) === 0 ? -1 : 1;
  });
  const ok = answers(ballot);
  if (ok.length === 0) throw firstError(ballot);
  return ok;
}
