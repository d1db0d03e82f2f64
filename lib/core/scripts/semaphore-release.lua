-- Counting semaphore: release one hold; the owner's last hold returns its permit(s) and wakes waiters.
-- KEYS[1] lock hash   KEYS[2] permits zset
-- ARGV[1] owner id    ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 permit returned, 2 this hold released but nested holds remain, 0 not held (lease ran
-- out, or this hold already released: a retried release changes nothing).
--!include holders.lua
local hash, zset = KEYS[1], KEYS[2]
local owner, hold = ARGV[1], ARGV[2]
if foreign(hash, zset) then return 0 end
local now = now_ms()
local wake = prune(hash, zset, now) > 0
local result = 0
local list = redis.call('HGET', hash, 'o:' .. owner)
local rest = false
if list then rest = holds_remove(list, hold) end
if rest == '' then
  redis.call('HDEL', hash, 'o:' .. owner)
  drop_weight(hash, owner)
  redis.call('ZREM', zset, owner)
  wake = true
  result = 1
elseif rest then
  redis.call('HSET', hash, 'o:' .. owner, rest)
  result = 2
end
sync_ttl(hash, zset, now)
if wake then redis.call(ARGV[4], ARGV[3], 'released') end
return result
