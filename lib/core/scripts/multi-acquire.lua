-- Several locks at once, all or none, in one call (all keys in one Cluster slot, or one Redis).
-- Each lock is written exactly as mutex-acquire.lua (reentrant hash {owner, fence, n, <hold id> = 1})
-- or token-acquire.lua (string = owner) would write it, with its own next fencing token (one token:
-- multi-key grants reserve none for cohort hand-offs), so single- and multi-key lockers of one key
-- exclude each other and share that key's token sequence. A busy mutex records this caller in its
-- waiters zset, as mutex-acquire.lua does, so its release publishes the wake-up this caller waits for;
-- a mutex reserved for one process for a moment ({ x = '+' .. process }) is busy for anyone else.
-- KEYS[3i-2] lock of key i   KEYS[3i-1] fence counter of key i   KEYS[3i] waiters zset of key i
-- ARGV[1] owner id   ARGV[2] hold id   ARGV[3] lease ms   ARGV[4] fence ttl ms
-- ARGV[5] '1' reentrant mutex (hash), '0' token lock (string)
-- Returns {1, token_1, ..., token_n} granted (nothing written unless every key was free),
--         {0, pttl, i} key i is held by someone else, {-1, type, i} key i holds data that is not
--         a lock (left untouched). A key this very owner already holds (a re-sent command) counts
--         as free and keeps its token.
--!include fence.lua
--!include args.lua
check_ms(ARGV[3], 'lease ms'); check_ms(ARGV[4], 'fence ttl ms')
local n = #KEYS / 3
local owner, hold, lease, hash = ARGV[1], ARGV[2], ARGV[3], ARGV[5] == '1'
local ours, reserved_for_us = {}, {}

local function busy(i, pttl, kind)
  if kind == 'hash' then
    -- Record a waiter on a mutex, so its release publishes a wake-up (mutex-release.lua): in the zset,
    -- and as the mark `w` on a hash that counts its holds (`n`; see mutex-acquire.lua on layout 1).
    local lock = KEYS[3 * i - 2]
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3 * i], 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), owner)
    redis.call('PEXPIRE', KEYS[3 * i], pttl + 2000)
    if redis.call('HEXISTS', lock, 'n') == 1 then redis.call('HSET', lock, 'w', '1') end
  end
  return {0, pttl, i}
end

for i = 1, n do
  local lock = KEYS[3 * i - 2]
  local kind = redis.call('TYPE', lock).ok
  if kind ~= 'none' then
    local pttl = redis.call('PTTL', lock)
    if (kind ~= 'hash' and kind ~= 'string') or pttl < 0 then return {-1, kind, i} end
    local holder
    if kind == 'hash' then holder = redis.call('HGET', lock, 'owner') else holder = redis.call('GET', lock) end
    if not holder then
      local reserved = kind == 'hash' and redis.call('HGET', lock, 'x')
      if not reserved then return {-1, kind, i} end -- a hash without an owner is not a lock
      if reserved ~= '+' .. owner then return busy(i, pttl, kind) end
      reserved_for_us[i] = true
    elseif holder ~= owner or (kind == 'hash') ~= hash then
      return busy(i, pttl, kind)
    else
      ours[i] = true
    end
  end
end
local out = {1}
for i = 1, n do
  local lock, fence = KEYS[3 * i - 2], KEYS[3 * i - 1]
  if reserved_for_us[i] then redis.call('DEL', lock) end
  if hash then redis.call('ZREM', KEYS[3 * i], owner) end
  local token
  if ours[i] then
    if hash then
      -- One more hold, counted (a hold already there is this call, sent again).
      if redis.call('HEXISTS', lock, hold) == 0 then
        redis.call('HSET', lock, hold, '1')
        redis.call('HINCRBY', lock, 'n', 1)
      end
      token = tonumber(redis.call('HGET', lock, 'fence'))
    else
      token = tonumber(redis.call('GET', fence)) or next_fence(fence, ARGV[4], 1)
    end
  else
    token = next_fence(fence, ARGV[4], 1)
    if hash then
      redis.call('HSET', lock, 'owner', owner, 'fence', string.format('%.0f', token), 'n', '1', hold, '1')
    else
      redis.call('SET', lock, owner)
    end
  end
  redis.call('PEXPIRE', lock, lease)
  out[i + 1] = token
end
return out
