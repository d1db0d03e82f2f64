import type { MemoryStore } from '../memory-store';
import { fmt } from './lua';

/**
 * fence.lua: next_fence(fence_key, fence_ttl_ms, reserve). The next fencing token: INCRBY on the
 * counter; a new counter, and a grant that reserves tokens for a cohort, are floored by the server
 * clock in µs (the counter then gets its TTL); the TTL is renewed every 1024 tokens.
 */
export function nextFence(redis: MemoryStore, fenceKey: string, fenceTtlMs: string, reserve = 1): number {
  const last = redis.incrby(fenceKey, reserve);
  let token = last - reserve + 1;
  if (reserve === 1 && last > 1) {
    if (last % 1024 === 0) redis.pexpire(fenceKey, fenceTtlMs);
    return token;
  }
  const nowUs = redis.nowUs();
  if (last === reserve || nowUs > token) token = nowUs;
  redis.set(fenceKey, fmt(token + reserve - 1), fenceTtlMs);
  return token;
}
