import { LockWrongTypeError } from '../errors';
import type { AttemptResult } from '../lock-kind';

/**
 * Decodes the common reply of the acquire scripts: {1, token} granted, {2, token} re-entered,
 * {0, pttl} busy, {-2} re-entry of a lock no longer held, {-1, type} foreign data at the key.
 */
export function decodeAttemptReply(reply: unknown, key: string, redisKey: string): AttemptResult {
  const [code, value] = reply as [number, number | string | undefined];
  switch (code) {
    case 1:
      return { status: 'granted', fencingToken: Number(value), reentered: false };
    case 2:
      return { status: 'granted', fencingToken: Number(value), reentered: true };
    case 0:
      return { status: 'busy', retryAfterMs: Number(value) };
    case -2:
      return { status: 'not-held' };
    default:
      throw new LockWrongTypeError(
        key,
        redisKey,
        `holds a ${String(value)} without a lease, which is not a lock`,
      );
  }
}
