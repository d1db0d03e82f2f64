-- Shared prelude of the shared-holder kinds (read-write lock, counting semaphore).
-- Layout of one lock (both keys carry the lock's hash tag, so they live in one Cluster slot):
--   KEYS lock hash  { o:<owner> = '<m>:<hold id> <m>:<hold id> ...' (the open holds of that owner,
--                     m = 'r' read, 'w' write, 'p' permit), plus kind fields (writer, ww, wwx) }
--   KEYS aux zset   { <owner> = lease deadline in server ms }: every holder has its own lease, so one
--                     stuck holder never keeps the lock alive for the others.
-- All deadlines come from the server clock (TIME); client clocks never matter.
if redis.replicate_commands then redis.replicate_commands() end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integers as plain digits (never 1.7e+12) for scores and TTLs.
local function fmt(n)
  return string.format('%.0f', n)
end

-- {-1, type, i} when KEYS[i] holds data that is not this lock (other type, or no TTL); nil when fine.
local function foreign(hash, zset)
  local ht = redis.call('TYPE', hash).ok
  if ht ~= 'none' and (ht ~= 'hash' or redis.call('PTTL', hash) < 0) then return {-1, ht, 1} end
  local zt = redis.call('TYPE', zset).ok
  if zt ~= 'none' and (zt ~= 'zset' or redis.call('PTTL', zset) < 0) then return {-1, zt, 2} end
  return nil
end

-- Semaphore permits (`permits: n`): a holder of n > 1 permits has n:<owner> = n in the hash and
-- adds n - 1 to the hash's `extra`, so permits in use = ZCARD + extra without a scan.
local function permits_used(hash, zset)
  return redis.call('ZCARD', zset) + (tonumber(redis.call('HGET', hash, 'extra') or '0') or 0)
end

-- Takes back the extra permits of `owner` (when it held more than one).
local function drop_weight(hash, owner)
  local n = tonumber(redis.call('HGET', hash, 'n:' .. owner) or '1') or 1
  if n > 1 then
    redis.call('HDEL', hash, 'n:' .. owner)
    redis.call('HINCRBY', hash, 'extra', 1 - n)
  end
end

-- Drops every holder whose lease ran out by the server clock; returns how many went.
local function prune(hash, zset, now)
  local expired = redis.call('ZRANGEBYSCORE', zset, '-inf', fmt(now))
  for _, owner in ipairs(expired) do
    redis.call('HDEL', hash, 'o:' .. owner)
    drop_weight(hash, owner)
    if redis.call('HGET', hash, 'writer') == owner then redis.call('HDEL', hash, 'writer') end
  end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', zset, '-inf', fmt(now)) end
  return #expired
end

-- The latest lease deadline among holders (0 when there is none).
local function last_deadline(zset)
  local last = redis.call('ZRANGE', zset, -1, -1, 'WITHSCORES')
  return last[2] and tonumber(last[2]) or 0
end

-- Both keys expire with the last holder's lease (or the writer-waiting marker, whichever is later);
-- when neither is left, the lock's keys are deleted.
local function sync_ttl(hash, zset, now)
  local until_ms = last_deadline(zset)
  local marker = tonumber(redis.call('HGET', hash, 'wwx') or '0') or 0
  if marker > until_ms then until_ms = marker end
  if until_ms <= now then
    redis.call('DEL', hash, zset)
    return
  end
  redis.call('PEXPIRE', hash, fmt(until_ms - now))
  redis.call('PEXPIRE', zset, fmt(until_ms - now))
end

-- Adds `entry` ('<m>:<hold id>') to the owner's holds (a retried add changes nothing).
local function holds_add(hash, owner, entry)
  local list = redis.call('HGET', hash, 'o:' .. owner)
  if not list then
    redis.call('HSET', hash, 'o:' .. owner, entry)
  elseif not string.find(' ' .. list .. ' ', ' ' .. entry .. ' ', 1, true) then
    redis.call('HSET', hash, 'o:' .. owner, list .. ' ' .. entry)
  end
end

-- Removes the hold `hold` (any mode) from `list`. Returns the remaining list ('' when empty) and the
-- hold's mode, or false when the hold is not there (released already: a retried release changes nothing).
local function holds_remove(list, hold)
  local padded = ' ' .. list .. ' '
  local s, e = string.find(padded, ':' .. hold .. ' ', 1, true)
  if not s or string.sub(padded, s - 2, s - 2) ~= ' ' then return false end
  local mode = string.sub(padded, s - 1, s - 1)
  local rest = string.sub(padded, 1, s - 3) .. string.sub(padded, e)
  return (string.gsub(rest, '^%s*(.-)%s*$', '%1')), mode
end

-- Moves the owner's lease deadline to at least `deadline` (a re-entry never shortens it).
local function extend_to(zset, owner, deadline)
  local score = tonumber(redis.call('ZSCORE', zset, owner) or '0')
  if score < deadline then redis.call('ZADD', zset, fmt(deadline), owner) end
end

-- The start and end of every per-hold release (read-write-release.lua, semaphore-release.lua), whose
-- KEYS are (lock hash, aux zset) and ARGV (owner, hold id, wake-up channel, 'PUBLISH' or 'SPUBLISH').
-- release_start: nil when foreign data sits at the lock; else now, whether pruning expired holders
-- freed anyone, the owner's open holds without this hold (false: it held no such hold) and the mode of
-- the hold removed.
local function release_start()
  local hash, zset = KEYS[1], KEYS[2]
  if foreign(hash, zset) then return nil end
  local now = now_ms()
  local wake = prune(hash, zset, now) > 0
  local list = redis.call('HGET', hash, 'o:' .. ARGV[1])
  local rest, mode = false, nil
  if list then rest, mode = holds_remove(list, ARGV[2]) end
  return now, wake, rest, mode
end

-- release_end: the lease follows the holders left, waiters hear it when `wake`, `result` is the reply.
local function release_end(now, wake, result)
  sync_ttl(KEYS[1], KEYS[2], now)
  if wake then redis.call(ARGV[4], ARGV[3], 'released') end
  return result
end
