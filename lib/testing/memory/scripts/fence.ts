import type { MemoryStore } from '../memory-store';
import { fmt, tonumber } from './lua';

/**
 * fence.lua: next_fence(fence_key, fence_ttl_ms, reserve). The next fencing token: above every
 * token the counter handed out, floored by the server clock in µs; `reserve` > 1 keeps the next
 * reserve - 1 tokens for the same grant (the counter is left at the last one).
 */
export function nextFence(
  redis: MemoryStore,
  fenceKey: string,
  fenceTtlMs: string,
  reserve?: number,
): number {
  const nowUs = redis.nowUs();
  const last = tonumber(redis.get(fenceKey) ?? '0') ?? 0;
  let token = last + 1;
  if (nowUs > token) token = nowUs;
  redis.set(fenceKey, fmt(token + (reserve ?? 1) - 1), fenceTtlMs);
  return token;
}
