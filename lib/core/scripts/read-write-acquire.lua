-- Read-write lock: take a read or a write hold, or re-enter (holders.lua describes the layout).
-- Many readers or one writer. The writer may also read (downgrade: its read hold outlives its write
-- holds); a pure reader asking for write is refused (upgrade would deadlock against other readers).
-- Writer preference: a writer refused because the lock is held leaves a short-lived marker
-- (ww = its owner, wwx = server-ms deadline, refreshed by each of its attempts) that makes NEW readers
-- wait, so a stream of overlapping readers cannot starve it. Re-entries of current holders ignore it.
-- KEYS[1] lock hash   KEYS[2] holders zset   KEYS[3] fence counter
-- ARGV[1] owner id    ARGV[2] hold id        ARGV[3] 'r' read or 'w' write   ARGV[4] lease ms
-- ARGV[5] fence ttl ms   ARGV[6] '1' = re-entry only (never a fresh grant)   ARGV[7] marker ttl ms
-- ARGV[8] wake-up channel   ARGV[9] 'PUBLISH' or 'SPUBLISH'
-- Returns {1, token} granted, {2, 0} re-entered, {0, ms until the holders' leases end, or -1} busy,
--         {-2} re-entry but not held, {-3} re-entry asked to write while this owner only reads,
--         {-1, type, i} KEYS[i] holds data that is not this lock (left untouched).
--!include fence.lua
--!include holders.lua
--!include args.lua
check_ms(ARGV[4], 'lease ms'); check_ms(ARGV[5], 'fence ttl ms'); check_ms(ARGV[7], 'marker ttl ms')
local hash, zset = KEYS[1], KEYS[2]
local owner, hold, mode = ARGV[1], ARGV[2], ARGV[3]
local lease = tonumber(ARGV[4])
local bad = foreign(hash, zset)
if bad then return bad end
local now = now_ms()
-- A holder whose lease ran out frees its share: wake the other waiters too.
if prune(hash, zset, now) > 0 then redis.call(ARGV[9], ARGV[8], 'released') end
local writer = redis.call('HGET', hash, 'writer')

if redis.call('HEXISTS', hash, 'o:' .. owner) == 1 then
  if mode == 'w' and writer ~= owner then return {-3} end
  holds_add(hash, owner, mode .. ':' .. hold)
  extend_to(zset, owner, now + lease)
  sync_ttl(hash, zset, now)
  return {2, 0}
end
if ARGV[6] == '1' then return {-2} end

local marker = redis.call('HGET', hash, 'ww')
if marker and (tonumber(redis.call('HGET', hash, 'wwx') or '0') or 0) <= now then
  redis.call('HDEL', hash, 'ww', 'wwx')
  marker = false
end
local holders = redis.call('ZCARD', zset)

if mode == 'w' then
  if holders > 0 then
    -- The first waiting writer owns the marker; other writers compete when the lock frees.
    if not marker or marker == owner then
      redis.call('HSET', hash, 'ww', owner, 'wwx', fmt(now + tonumber(ARGV[7])))
    end
    sync_ttl(hash, zset, now)
    return {0, last_deadline(zset) - now}
  end
  if marker == owner then redis.call('HDEL', hash, 'ww', 'wwx') end
  redis.call('HSET', hash, 'writer', owner)
else
  if writer then return {0, last_deadline(zset) - now} end
  if marker then return {0, -1} end
end

redis.call('HSET', hash, 'o:' .. owner, mode .. ':' .. hold)
redis.call('ZADD', zset, fmt(now + lease), owner)
local token = next_fence(KEYS[3], ARGV[5])
sync_ttl(hash, zset, now)
return {1, token}
