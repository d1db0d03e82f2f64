-- Inspection: read the state of one lock key, every kind at once (or only the kinds asked for).
-- Read only: nothing is written, pruned or renewed.
-- KEYS[1] mutex/token lock (`:m`)   KEYS[2] mutex waiters zset (`:m:aux`)
-- KEYS[3] read-write hash (`:rw`)   KEYS[4] read-write holders zset (`:rw:aux`)
-- KEYS[5] fair holder hash (`:fair`)   KEYS[6] fair queue zset (`:fair:aux`)   KEYS[7] fair deadlines hash
-- KEYS[8] semaphore hash (`:sem`)   KEYS[9] semaphore holders zset (`:sem:aux`)   KEYS[10] fence counter
-- ARGV[1] the kind tags to read, space-separated ('m rw fair sem')
-- Returns { server ms, fence counter ('' when none),
--           m: type, contents (HGETALL, or {value} for a string), pttl, waiters (ZRANGE WITHSCORES),
--           rw: hash (HGETALL), holders (ZRANGE WITHSCORES),
--           fair: hash, pttl, queue (ZRANGE WITHSCORES), deadlines (HGETALL),
--           sem: hash, holders }; a kind not asked for, or a key of a foreign type, reads as empty.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wanted = ' ' .. ARGV[1] .. ' '
local function want(tag) return string.find(wanted, ' ' .. tag .. ' ', 1, true) ~= nil end

local function hash(key)
  if redis.call('TYPE', key).ok ~= 'hash' then return {} end
  return redis.call('HGETALL', key)
end
local function zset(key)
  if redis.call('TYPE', key).ok ~= 'zset' then return {} end
  return redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
end

local fence = redis.call('GET', KEYS[10]) or ''
local out = { now, fence, 'none', {}, -2, {}, {}, {}, {}, -2, {}, {}, {}, {} }
if want('m') then
  local kind = redis.call('TYPE', KEYS[1]).ok
  out[3] = kind
  if kind == 'hash' then out[4] = redis.call('HGETALL', KEYS[1])
  elseif kind == 'string' then out[4] = { redis.call('GET', KEYS[1]) } end
  out[5] = redis.call('PTTL', KEYS[1])
  out[6] = zset(KEYS[2])
end
if want('rw') then
  out[7] = hash(KEYS[3])
  out[8] = zset(KEYS[4])
end
if want('fair') then
  out[9] = hash(KEYS[5])
  out[10] = redis.call('PTTL', KEYS[5])
  out[11] = zset(KEYS[6])
  out[12] = hash(KEYS[7])
end
if want('sem') then
  out[13] = hash(KEYS[8])
  out[14] = zset(KEYS[9])
end
return out
