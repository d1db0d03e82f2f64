-- Inspection registry: read every live engine record of one key prefix (one slot: one call).
-- An engine is live while its record exists: records expire by the server's TTL (the zset's scores
-- come from the writers' clocks and only serve to prune entries long gone).
-- KEYS[1] engines zset
-- ARGV[1] prefix of the record keys (the engine id is appended)
-- Returns { engine id, HGETALL of its record, engine id, HGETALL, ... } for each engine whose record
--         exists.
local out = {}
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return out end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local record = ARGV[1] .. id
  if redis.call('TYPE', record).ok == 'hash' then
    out[#out + 1] = id
    out[#out + 1] = redis.call('HGETALL', record)
  end
end
return out
