-- Inspection registry: read every live engine record of one key prefix (one slot: one call).
-- KEYS[1] engines zset
-- ARGV[1] prefix of the record keys (the engine id is appended)
-- Returns { server ms, engine id, HGETALL of its record, engine id, HGETALL, ... } for each engine
--         whose record has not expired.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = { now }
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then return out end
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
for _, id in ipairs(ids) do
  local record = ARGV[1] .. id
  if redis.call('TYPE', record).ok == 'hash' then
    out[#out + 1] = id
    out[#out + 1] = redis.call('HGETALL', record)
  end
end
return out
