import type { MemoryStore } from '../memory-store';
import { fmt, tonumber } from './lua';

/**
 * fence.lua: next_fence(fence_key, fence_ttl_ms, reserve). The next fencing token: the server clock in
 * µs, written with `SET … GET`; when the last token read back is not below it, one above that instead.
 * `reserve` > 1 keeps the next reserve - 1 tokens for the same grant (the counter is left at the last one).
 */
export function nextFence(redis: MemoryStore, fenceKey: string, fenceTtlMs: string, reserve = 1): number {
  let token = redis.nowUs();
  const last = tonumber(redis.get(fenceKey) ?? '0') ?? 0;
  redis.set(fenceKey, fmt(token + reserve - 1), fenceTtlMs);
  if (last >= token) {
    token = last + 1;
    redis.set(fenceKey, fmt(token + reserve - 1), fenceTtlMs);
  }
  return token;
}
