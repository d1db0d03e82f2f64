-- Plain token lock (not reentrant): SET NX PX with the owner's random token, plus a fencing token.
-- KEYS[1] lock string   KEYS[2] fence counter
-- ARGV[1] owner id      ARGV[2] lease ms   ARGV[3] fence ttl ms
-- Returns {1, token} granted (also when this very owner asks again: a re-sent command), {0, pttl} busy,
--         {-1, type} the key holds data that is not a lock.
--!include fence.lua
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, next_fence(KEYS[2], ARGV[3])}
end
local kind = redis.call('TYPE', KEYS[1]).ok
-- Our own grant, asked for again: ioredis re-sends a command whose reply was lost with the
-- connection. Nobody can have been granted since, so the counter still holds our token.
if kind == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  return {1, tonumber(redis.call('GET', KEYS[2])) or next_fence(KEYS[2], ARGV[3])}
end
local pttl = redis.call('PTTL', KEYS[1])
if (kind ~= 'hash' and kind ~= 'string') or pttl < 0 then return {-1, kind} end
return {0, pttl}
