-- Plain token lock (not reentrant): SET NX PX with the owner's random token, plus a fencing token.
-- KEYS[1] lock string   KEYS[2] fence counter
-- ARGV[1] owner id      ARGV[2] lease ms   ARGV[3] fence ttl ms   ARGV[4] fencing tokens to reserve (>= 1)
-- Returns {1, token} granted (also when this very owner asks again: a re-sent command), {0, pttl} busy,
--         {-1, type} the key holds data that is not a lock.
--!include fence.lua
--!include args.lua
check_ms(ARGV[2], 'lease ms'); check_ms(ARGV[3], 'fence ttl ms'); check_ms(ARGV[4], 'tokens to reserve')
local reserve = tonumber(ARGV[4])
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, next_fence(KEYS[2], ARGV[3], reserve)}
end
local current = redis.pcall('GET', KEYS[1])
local pttl = redis.call('PTTL', KEYS[1])
if type(current) == 'table' then
  -- A hash with a lease is a reentrant mutex of the same name (busy); anything else is foreign.
  local kind = redis.call('TYPE', KEYS[1]).ok
  if kind ~= 'hash' or pttl < 0 then return {-1, kind} end
  return {0, pttl}
end
-- Our own grant, asked for again: ioredis re-sends a command whose reply was lost with the
-- connection. Nobody can have been granted since, so the counter still ends our reserved block.
if current == ARGV[1] then
  local last = tonumber(redis.call('GET', KEYS[2]))
  return {1, last and (last - reserve + 1) or next_fence(KEYS[2], ARGV[3], reserve)}
end
if pttl < 0 then return {-1, 'string'} end
return {0, pttl}
