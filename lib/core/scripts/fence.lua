-- Shared prelude (included by scripts that grant a lock): next_fence(fence_key, fence_ttl_ms, reserve).
-- Returns the next fencing token of a lock: greater than every token the key handed out while its
-- counter lived; a new counter starts at the server clock in microseconds, so that once an idle
-- counter has expired (after fence_ttl_ms) the next token is still greater than any earlier one. `reserve` > 1
-- keeps the next reserve - 1 tokens for this grant too (local hand-offs of a per-process cohort):
-- the counter is left at the last reserved token, so later grants start above all of them.
if redis.replicate_commands then redis.replicate_commands() end
local function next_fence(fence_key, fence_ttl_ms, reserve)
  local last = tonumber(redis.call('GET', fence_key) or '0') or 0
  local token = last + 1
  if last == 0 then
    -- A new (or expired) counter starts at the server clock: above every token of the counter
    -- before it, which stopped at least fence_ttl_ms ago. A live counter needs no clock.
    local t = redis.call('TIME')
    token = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  redis.call('SET', fence_key, string.format('%.0f', token + (reserve or 1) - 1), 'PX', fence_ttl_ms)
  return token
end
