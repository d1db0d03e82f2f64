import { LockUpgradeError, LockWrongTypeError } from '../errors';
import type { AttemptResult } from '../lock-kind';
import { decodeAttemptReply } from './reply';

/**
 * Decodes the acquire replies of the read-write, fair and semaphore scripts: the common codes of
 * reply.ts, plus {-3} (a pure reader asked to write: upgrade refused) and {-1, type, i} naming which
 * of the lock's keys (`redisKeys[i - 1]`) holds foreign data.
 */
export function decodeFamilyReply(reply: unknown, key: string, redisKeys: readonly string[]): AttemptResult {
  const [code, type, index] = reply as [number, string | undefined, number | undefined];
  if (code === -3) throw new LockUpgradeError(key);
  if (code === -1) {
    const redisKey = redisKeys[(index ?? 1) - 1] ?? redisKeys[0]!;
    throw new LockWrongTypeError(
      key,
      redisKey,
      `holds a ${String(type)} without a lease, which is not this lock's data`,
    );
  }
  return decodeAttemptReply(reply, key, redisKeys[0]!);
}

/** What a reply that arrived after its command timed out asks for: undo a grant, or leave the queue. */
export function lateReplyAction(reply: unknown): 'release' | 'abandon' | 'none' {
  const code = Array.isArray(reply) ? reply[0] : undefined;
  return code === 1 || code === 2 ? 'release' : code === 0 ? 'abandon' : 'none';
}
