-- Read-write lock: release one hold (holders.lua describes the layout).
-- Wakes waiters when it matters: the last holder left (a writer may enter), or the writer gave up
-- its write holds (readers may enter). A reader leaving among other readers frees nothing for anyone.
-- KEYS[1] lock hash   KEYS[2] holders zset
-- ARGV[1] owner id    ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 this owner's last hold released, 2 this hold released but the owner holds others,
--         0 not held (lease ran out, or this hold already released: a retried release changes nothing).
--!include holders.lua
local hash, zset = KEYS[1], KEYS[2]
local owner, hold = ARGV[1], ARGV[2]
if foreign(hash, zset) then return 0 end
local now = now_ms()
local wake = prune(hash, zset, now) > 0
local result = 0
local list = redis.call('HGET', hash, 'o:' .. owner)
local rest, mode = false, nil
if list then rest, mode = holds_remove(list, hold) end
if rest then
  if mode == 'w' and not string.find(' ' .. rest, ' w:', 1, true) then
    redis.call('HDEL', hash, 'writer')
    wake = true
  end
  if rest == '' then
    redis.call('HDEL', hash, 'o:' .. owner)
    redis.call('ZREM', zset, owner)
    if redis.call('ZCARD', zset) == 0 then wake = true end
    result = 1
  else
    redis.call('HSET', hash, 'o:' .. owner, rest)
    result = 2
  end
end
sync_ttl(hash, zset, now)
if wake then redis.call(ARGV[4], ARGV[3], 'released') end
return result
