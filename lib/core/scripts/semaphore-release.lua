-- Counting semaphore: release one hold; the owner's last hold returns its permit(s) and wakes waiters.
-- KEYS[1] lock hash   KEYS[2] permits zset
-- ARGV[1] owner id    ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 permit returned, 2 this hold released but nested holds remain, 0 not held (lease ran
-- out, or this hold already released: a retried release changes nothing).
--!include holders.lua
local now, wake, rest = release_start()
if now == nil then return 0 end
local hash, zset, owner = KEYS[1], KEYS[2], ARGV[1]
local result = 0
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
return release_end(now, wake, result)
