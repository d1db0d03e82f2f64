import { LockWrongTypeError } from '../errors';
import type { AttemptResult, HoldRef, ReleaseResult } from '../lock-kind';
import type { RedisGateway } from '../redis-gateway';
import type { LuaScript } from '../script-library';

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

/**
 * Runs a per-hold release script (mutex, fair, read-write, semaphore: ARGV owner, hold id, wake-up
 * channel, publish command) and decodes its reply: 1 released, 2 nested holds remain, 0 not held.
 */
export async function releaseHold(
  gateway: RedisGateway,
  script: LuaScript,
  keys: string[],
  h: HoldRef,
): Promise<ReleaseResult> {
  const reply = await gateway.run(
    script,
    keys,
    [h.owner, h.holdId, h.names.channel, gateway.publishCommand],
    h.key,
  );
  return reply === 1 ? 'released' : reply === 2 ? 'still-held' : 'not-held';
}
