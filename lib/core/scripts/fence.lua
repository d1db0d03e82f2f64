-- Shared prelude (included by scripts that grant a lock): next_fence(fence_key, fence_ttl_ms, reserve).
-- Returns the next fencing token of a lock: greater than every token the key handed out while its
-- counter lived, and floored by the server clock in microseconds, so that once an idle counter has
-- expired (after fence_ttl_ms), or a failover lost its last writes, the next token is still greater
-- than any earlier one. One `SET … GET` (Redis 6.2) writes the clock and reads the last token at once;
-- only when the last token is not below the clock (two grants in one microsecond, or a clock that
-- stepped back) is the counter written again, above it. `reserve` > 1 keeps the next reserve - 1
-- tokens for this grant too (local hand-offs of a per-process cohort): the counter is left at the last
-- reserved token, so later grants start above all of them.
if redis.replicate_commands then redis.replicate_commands() end
local function next_fence(fence_key, fence_ttl_ms, reserve)
  reserve = reserve or 1
  local t = redis.call('TIME')
  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = redis.call('SET', fence_key, string.format('%.0f', token + reserve - 1), 'PX', fence_ttl_ms, 'GET')
  last = tonumber(last or '0') or 0
  if last >= token then
    token = last + 1
    redis.call('SET', fence_key, string.format('%.0f', token + reserve - 1), 'PX', fence_ttl_ms)
  end
  return token
end
