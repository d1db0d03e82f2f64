-- Read-write lock: release one hold (holders.lua describes the layout).
-- Wakes waiters when it matters: the last holder left (a writer may enter), or the writer gave up
-- its write holds (readers may enter). A reader leaving among other readers frees nothing for anyone.
-- KEYS[1] lock hash   KEYS[2] holders zset
-- ARGV[1] owner id    ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 this owner's last hold released, 2 this hold released but the owner holds others,
--         0 not held (lease ran out, or this hold already released: a retried release changes nothing).
--!include holders.lua
local now, wake, rest, mode = release_start()
if now == nil then return 0 end
local hash, zset, owner = KEYS[1], KEYS[2], ARGV[1]
local result = 0
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
return release_end(now, wake, result)
