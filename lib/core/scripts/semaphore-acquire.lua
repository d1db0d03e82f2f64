-- Counting semaphore: take one of `limit` permits, or re-enter (holders.lua describes the layout:
-- one zset entry per permit holder, with its own server-time lease; expired permits come back on
-- every access). A permit is reentrant: the same owner (async context) nests holds on its one permit.
-- `limit` travels with each call: use the same limit for a key everywhere (a call with a higher limit
-- is granted while fewer than its limit are held).
-- KEYS[1] lock hash   KEYS[2] permits zset   KEYS[3] fence counter
-- ARGV[1] owner id    ARGV[2] hold id        ARGV[3] limit   ARGV[4] lease ms   ARGV[5] fence ttl ms
-- ARGV[6] '1' = re-entry only   ARGV[7] wake-up channel   ARGV[8] 'PUBLISH' or 'SPUBLISH'
-- Returns {1, token} granted, {2, 0} re-entered, {0, ms until the first permit's lease ends} busy,
--         {-2} re-entry but not held, {-1, type, i} KEYS[i] holds data that is not this lock.
--!include fence.lua
--!include holders.lua
local hash, zset = KEYS[1], KEYS[2]
local owner, hold = ARGV[1], ARGV[2]
local lease = tonumber(ARGV[4])
local bad = foreign(hash, zset)
if bad then return bad end
local now = now_ms()
-- Expired permits are free again: wake the other waiters to take them.
if prune(hash, zset, now) > 0 then redis.call(ARGV[8], ARGV[7], 'released') end

if redis.call('HEXISTS', hash, 'o:' .. owner) == 1 then
  holds_add(hash, owner, 'p:' .. hold)
  extend_to(zset, owner, now + lease)
  sync_ttl(hash, zset, now)
  return {2, 0}
end
if ARGV[6] == '1' then return {-2} end

if redis.call('ZCARD', zset) >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2]) - now}
end
redis.call('HSET', hash, 'o:' .. owner, 'p:' .. hold)
redis.call('ZADD', zset, fmt(now + lease), owner)
local token = next_fence(KEYS[3], ARGV[5])
sync_ttl(hash, zset, now)
return {1, token}
