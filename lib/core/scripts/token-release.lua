-- Plain token lock: compare-and-delete, then wake the waiters.
-- KEYS[1] lock string
-- ARGV[1] owner id   ARGV[2] wake-up channel   ARGV[3] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 released, 0 not held (expired or taken over; the key is left alone).
if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call(ARGV[3], ARGV[2], 'released')
  return 1
end
return 0
