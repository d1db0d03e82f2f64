-- Reentrant mutex: release one hold; the last hold deletes the lock and wakes the waiters.
-- KEYS[1] lock hash
-- ARGV[1] owner id   ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 released (lock gone), 2 this hold removed but nested holds remain, 0 not held
-- (expired, taken over, or this hold already released: a retried release changes nothing).
local lock = KEYS[1]
if redis.call('TYPE', lock).ok ~= 'hash' then return 0 end
if redis.call('HGET', lock, 'owner') ~= ARGV[1] then return 0 end
if redis.call('HDEL', lock, ARGV[2]) == 0 then return 0 end
if redis.call('HLEN', lock) <= 2 then
  redis.call('DEL', lock)
  redis.call(ARGV[4], ARGV[3], 'released')
  return 1
end
return 2
