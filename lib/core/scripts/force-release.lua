-- Administrative release of a lock whatever its owner (mutex or token lock); wakes the waiters.
-- Refuses to delete anything that is not a lock (a key without TTL, or of another type).
-- KEYS[1] lock key
-- ARGV[1] wake-up channel   ARGV[2] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 deleted, 0 nothing to delete, {-1, type} the key holds data that is not a lock.
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return 0 end
if (kind ~= 'hash' and kind ~= 'string') or redis.call('PTTL', KEYS[1]) < 0 then return {-1, kind} end
redis.call('DEL', KEYS[1])
redis.call(ARGV[2], ARGV[1], 'released')
return 1
