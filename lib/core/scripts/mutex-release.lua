-- Reentrant mutex (and the fair lock's holder): release one hold; the last hold deletes the lock and
-- wakes the waiters: when one was recorded (`w`, set by a busy attempt of another owner), or always
-- when ARGV[5] is '1' (the fair lock, whose queue waits for the message).
-- KEYS[1] lock hash
-- ARGV[1] owner id   ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- ARGV[5] '1' = always publish
-- Returns 1 released (lock gone), 2 this hold removed but nested holds remain, 0 not held
-- (expired, taken over, or this hold already released: a retried release changes nothing).
local lock = KEYS[1]
if redis.pcall('HGET', lock, 'owner') ~= ARGV[1] then return 0 end
if redis.call('HDEL', lock, ARGV[2]) == 0 then return 0 end
local waiters = redis.call('HEXISTS', lock, 'w')
if redis.call('HLEN', lock) - waiters <= 2 then
  redis.call('DEL', lock)
  if waiters == 1 or ARGV[5] == '1' then redis.call(ARGV[4], ARGV[3], 'released') end
  return 1
end
return 2
