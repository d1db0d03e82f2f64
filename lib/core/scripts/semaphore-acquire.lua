-- Counting semaphore: take `permits` of `limit` permits at once (all or none), or re-enter
-- (holders.lua describes the layout: one zset entry per holder, with its own server-time lease;
-- a holder of n > 1 permits also has n:<owner> = n and counts n - 1 in `extra`; expired holders
-- give their permits back on every access). A holder is reentrant: the same owner (async context)
-- nests holds on the permits it has, whatever `permits` the nested call names.
-- `limit` travels with each call: use the same limit for a key everywhere (a call with a higher limit
-- is granted while fewer than its limit are in use).
-- Starvation: a request refused for lack of room leaves a reservation (ww = owner, wwn = permits,
-- wwx = server-ms deadline, refreshed by each attempt) when there is none, when it is its own, or
-- when it asks for more permits than the current one. While a reservation lives, other new requests
-- are granted only if the reserved permits stay free, so a large request is not starved by a stream
-- of small ones; it loses its reservation only to a strictly larger request, or when it stops trying.
-- KEYS[1] lock hash   KEYS[2] permits zset   KEYS[3] fence counter
-- ARGV[1] owner id    ARGV[2] hold id        ARGV[3] limit   ARGV[4] lease ms   ARGV[5] fence ttl ms
-- ARGV[6] '1' = re-entry only   ARGV[7] wake-up channel   ARGV[8] 'PUBLISH' or 'SPUBLISH'
-- ARGV[9] permits (1 <= permits <= limit)   ARGV[10] reservation ttl ms (0: do not reserve)
-- Returns {1, token} granted, {2, 0} re-entered, {0, ms until the first permit's lease ends} busy,
--         {-2} re-entry but not held, {-1, type, i} KEYS[i] holds data that is not this lock.
--!include fence.lua
--!include holders.lua
--!include args.lua
check_ms(ARGV[3], 'limit'); check_ms(ARGV[4], 'lease ms'); check_ms(ARGV[5], 'fence ttl ms'); check_ms(ARGV[9], 'permits'); check_ms(ARGV[10], 'reservation ttl ms', 0)
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

local want = tonumber(ARGV[9])
local reserved = redis.call('HGET', hash, 'ww')
local reservedN = tonumber(redis.call('HGET', hash, 'wwn') or '0') or 0
if reserved and (tonumber(redis.call('HGET', hash, 'wwx') or '0') or 0) <= now then
  redis.call('HDEL', hash, 'ww', 'wwx', 'wwn')
  reserved = false
end
local room = tonumber(ARGV[3]) - permits_used(hash, zset)
if reserved and reserved ~= owner then room = room - reservedN end
if want > room then
  if tonumber(ARGV[10]) > 0 and (not reserved or reserved == owner or want > reservedN) then
    redis.call('HSET', hash, 'ww', owner, 'wwn', want, 'wwx', fmt(now + tonumber(ARGV[10])))
  end
  sync_ttl(hash, zset, now)
  local first = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
  if not first[2] then return {0, -1} end
  return {0, tonumber(first[2]) - now}
end
if reserved == owner then redis.call('HDEL', hash, 'ww', 'wwx', 'wwn') end
redis.call('HSET', hash, 'o:' .. owner, 'p:' .. hold)
if want > 1 then
  redis.call('HSET', hash, 'n:' .. owner, want)
  redis.call('HINCRBY', hash, 'extra', want - 1)
end
redis.call('ZADD', zset, fmt(now + lease), owner)
local token = next_fence(KEYS[3], ARGV[5])
sync_ttl(hash, zset, now)
return {1, token}
