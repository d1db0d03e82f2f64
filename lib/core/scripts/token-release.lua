-- Plain token lock: compare-and-delete, then wake the waiters.
-- KEYS[1] lock string
-- ARGV[1] owner id   ARGV[2] wake-up channel   ARGV[3] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 released, 0 not held (expired or taken over; the key is left alone).
-- GET under pcall: a key of another type (a reentrant mutex of the same name) is not ours either.
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call(ARGV[3], ARGV[2], 'released')
  return 1
end
return 0
