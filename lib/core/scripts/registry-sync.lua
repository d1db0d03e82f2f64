-- Inspection registry: write one engine's record (who it is, the locks it holds, its local waiters)
-- and keep it alive. Records expire on their own; the engines zset is pruned by score.
-- KEYS[1] engines zset (engine id -> record expiry, server ms)   KEYS[2] this engine's record hash
-- ARGV[1] engine id   ARGV[2] record ttl ms   ARGV[3] 'full' (rewrite), 'diff' (patch) or 'drop' (remove)
-- ARGV[4] n: field/value pairs to set, then n pairs (ARGV[5..4+2n]), then fields to delete
-- Returns 1 written, 0 dropped, -1 a diff found no record (expired, or Redis lost it): send a full one.
local engines, record = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', engines, '-inf', now)
if ARGV[3] == 'drop' then
  redis.call('ZREM', engines, ARGV[1])
  redis.call('DEL', record)
  return 0
end
if ARGV[3] == 'diff' and redis.call('EXISTS', record) == 0 then return -1 end
if ARGV[3] == 'full' then redis.call('DEL', record) end
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  redis.call('HSET', record, ARGV[5 + 2 * i], ARGV[6 + 2 * i])
end
for j = 5 + 2 * n, #ARGV do
  redis.call('HDEL', record, ARGV[j])
end
local ttl = tonumber(ARGV[2])
redis.call('PEXPIRE', record, ttl)
redis.call('ZADD', engines, string.format('%.0f', now + ttl), ARGV[1])
-- The zset lives as long as its longest-lived record.
local last = redis.call('ZRANGE', engines, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', engines, math.max(1, tonumber(last[2]) - now))
return 1
