-- Read-write lock: a writer that gave up waiting (timeout, abort, shutdown) drops its
-- writer-waiting marker at once, so the readers it was holding back need not wait for it to expire.
-- The semaphore's permit reservation (ww, wwn, wwx) is dropped the same way.
-- KEYS[1] lock hash   KEYS[2] holders zset
-- ARGV[1] owner id    ARGV[2] wake-up channel   ARGV[3] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 marker dropped (readers woken), 0 this owner had no marker.
--!include holders.lua
local hash, zset = KEYS[1], KEYS[2]
if foreign(hash, zset) then return 0 end
if redis.call('HGET', hash, 'ww') ~= ARGV[1] then return 0 end
redis.call('HDEL', hash, 'ww', 'wwx', 'wwn')
sync_ttl(hash, zset, now_ms())
redis.call(ARGV[3], ARGV[2], 'released')
return 1
