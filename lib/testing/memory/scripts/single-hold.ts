import type { MemoryStore } from '../memory-store';

/**
 * single-hold.lua's single_hold(): owner, hold id, token and mark ('' or ' w') of a mutex held once,
 * '<owner> <hold id> <token>[ w]'; undefined for a token lock's '<owner>'.
 */
export function matchSingleHold(
  value: string,
): [owner: string, hold: string, token: string, marked: string] | undefined {
  const m = /^(\S+) (\S+) (\d+)([\s\S]*)$/.exec(value);
  return m ? [m[1]!, m[2]!, m[3]!, m[4]!] : undefined;
}

/**
 * single-hold.lua's add_second_hold(): the string of `owner`'s single hold becomes the hash with a
 * second hold `next.hold`, its lease no shorter than `next.pttl` (what the string had left) or
 * `next.leaseMs`, the mark kept.
 */
export function addSecondHold(
  redis: MemoryStore,
  lock: string,
  [owner, hold, token, marked]: [string, string, string, string],
  next: { pttl: number; leaseMs: string; hold: string },
): void {
  redis.del(lock);
  redis.hset(lock, 'owner', owner, 'fence', token, 'n', '2', hold, '1', next.hold, '1');
  if (marked !== '') redis.hset(lock, 'w', '1');
  redis.pexpire(lock, Math.max(next.pttl, Number(next.leaseMs)));
}
