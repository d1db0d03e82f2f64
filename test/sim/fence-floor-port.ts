import type { MemoryStore } from '../../lib/testing/memory/memory-store';
import { checkMs } from '../../lib/testing/memory/scripts/args';
import { fmt, tonumber } from '../../lib/testing/memory/scripts/lua';

/**
 * fence-floor.lua (RedLock only), ported line by line for the simulated servers: raises a lock's
 * fencing counter on this node to at least the token a quorum grant handed out. (The in-memory testing
 * backend has no RedLock, so its ports leave this one out.)
 */
export function fenceFloor(redis: MemoryStore, KEYS: readonly string[], ARGV: string[]): number {
  checkMs(ARGV[2], 'fence ttl ms');
  const current = tonumber(redis.get(KEYS[1]!) ?? '0') ?? 0;
  const token = tonumber(ARGV[1])!;
  if (token > current) {
    redis.set(KEYS[1]!, fmt(token), ARGV[2]!);
    return token;
  }
  redis.pexpire(KEYS[1]!, ARGV[2]!);
  return current;
}
