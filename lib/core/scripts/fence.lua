-- Shared prelude (included by scripts that grant a lock): next_fence(fence_key, fence_ttl_ms, reserve).
-- Returns the next fencing token of a lock, greater than every token the key handed out: one INCRBY on
-- the key's counter on the common path. A new counter (none yet, or the last one expired) starts at the
-- server clock in microseconds, so it is still greater than any token an expired counter gave: the
-- counter gains at most 1 per grant, far less than the clock gains between two grants. `reserve` > 1
-- keeps the next reserve - 1 tokens for this grant too (local hand-offs of a per-process cohort); such a
-- grant is floored by the clock as well, so the counter never runs ahead of the clock by more than one
-- block. The counter's TTL (fence_ttl_ms) is set when it is created or floored and renewed every 1024
-- tokens: a counter lives at least fence_ttl_ms after its creation or after its 1024th-last grant.
if redis.replicate_commands then redis.replicate_commands() end
local function next_fence(fence_key, fence_ttl_ms, reserve)
  reserve = reserve or 1
  local last = redis.call('INCRBY', fence_key, reserve)
  local token = last - reserve + 1
  if reserve == 1 and last > 1 then
    if last % 1024 == 0 then redis.call('PEXPIRE', fence_key, fence_ttl_ms) end
    return token
  end
  local t = redis.call('TIME')
  local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  -- `last == reserve`: INCRBY created the counter (tokens are server microseconds, never that small).
  if last == reserve or now_us > token then token = now_us end
  redis.call('SET', fence_key, string.format('%.0f', token + reserve - 1), 'PX', fence_ttl_ms)
  return token
end
