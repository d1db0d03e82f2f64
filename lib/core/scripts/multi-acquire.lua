-- Several locks at once, all or none, in one call (all keys in one Cluster slot, or one Redis).
-- Each lock is written exactly as mutex-acquire.lua (one hold: the string '<owner> <hold id> <token>';
-- a second hold turns it into the hash {owner, fence, n, <hold id> = 1 ...}) or token-acquire.lua
-- (string = owner) would write it, with its own next fencing token (one token:
-- multi-key grants reserve none for cohort hand-offs), so single- and multi-key lockers of one key
-- exclude each other and share that key's token sequence. A busy mutex records this caller in its
-- waiters zset, as mutex-acquire.lua does, so its release publishes the wake-up this caller waits for;
-- a mutex reserved for one process for a moment ({ x = '+' .. process }) is busy for anyone else.
-- KEYS[3i-2] lock of key i   KEYS[3i-1] fence counter of key i   KEYS[3i] waiters zset of key i
-- ARGV[1] owner id   ARGV[2] hold id   ARGV[3] lease ms   ARGV[4] fence ttl ms
-- ARGV[5] '1' reentrant mutex, '0' token lock
-- Returns {1, token_1, ..., token_n} granted (nothing written unless every key was free),
--         {0, pttl, i} key i is held by someone else, {-1, type, i} key i holds data that is not
--         a lock (left untouched). A key this very owner already holds (a re-sent command) counts
--         as free and keeps its token.
--!include fence.lua
--!include args.lua
--!include single-hold.lua
check_ms(ARGV[3], 'lease ms'); check_ms(ARGV[4], 'fence ttl ms')
local n = #KEYS / 3
local owner, hold, lease, hash = ARGV[1], ARGV[2], ARGV[3], ARGV[5] == '1'
local ours, reserved_for_us = {}, {}

-- A busy mutex records this caller as a waiter, so its release publishes the wake-up this caller waits
-- for (mutex-release.lua): in the zset, and as the mark on the grant. `mark`: true for a hash, the
-- string of a single hold not marked yet, nil when there is nothing to mark. A token lock's release
-- always publishes.
local function busy(i, pttl, mutex, mark)
  if mutex then
    local lock = KEYS[3 * i - 2]
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3 * i], 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), owner)
    redis.call('PEXPIRE', KEYS[3 * i], pttl + 2000)
    if type(mark) == 'string' then
      redis.call('SET', lock, mark .. ' w', 'KEEPTTL')
    elseif mark and redis.call('HEXISTS', lock, 'n') == 1 then
      -- Only a hash that counts its holds takes the mark `w` (see mutex-acquire.lua on layout 1).
      redis.call('HSET', lock, 'w', '1')
    end
  end
  return {0, pttl, i}
end

-- The mutexes of one hold this owner holds already (index -> {hold id, token, mark, pttl}).
local single = {}
for i = 1, n do
  local lock = KEYS[3 * i - 2]
  local kind = redis.call('TYPE', lock).ok
  if kind ~= 'none' then
    local pttl = redis.call('PTTL', lock)
    if (kind ~= 'hash' and kind ~= 'string') or pttl < 0 then return {-1, kind, i} end
    local holder, value, h, t, m
    if kind == 'hash' then
      holder = redis.call('HGET', lock, 'owner')
    else
      value = redis.call('GET', lock)
      holder, h, t, m = single_hold(value)
      if holder == owner then single[i] = {h, t, m, pttl} end
      -- Not a mutex of one hold: a token lock, its owner the whole string.
      if not holder then holder, value = value, nil end
    end
    local mutex = kind == 'hash' or value ~= nil
    if not holder then
      local reserved = kind == 'hash' and redis.call('HGET', lock, 'x')
      if not reserved then return {-1, kind, i} end -- a hash without an owner is not a lock
      if reserved ~= '+' .. owner then return busy(i, pttl, true, nil) end
      reserved_for_us[i] = true
    elseif holder ~= owner or mutex ~= hash then
      return busy(i, pttl, mutex, kind == 'hash' or (m == '' and value) or nil)
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
  if single[i] then
    local h, t, m, pttl = unpack(single[i])
    token = tonumber(t)
    -- One more hold (the same hold: this call, sent again): the string becomes the hash.
    if h ~= hold then
      add_second_hold(lock, owner, h, t, m, pttl, lease, hold)
    else
      redis.call('PEXPIRE', lock, lease)
    end
  elseif ours[i] then
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
    redis.call('PEXPIRE', lock, lease)
  else
    token = next_fence(fence, ARGV[4], 1)
    if hash then
      redis.call('SET', lock, owner .. ' ' .. hold .. ' ' .. string.format('%.0f', token), 'PX', lease)
    else
      redis.call('SET', lock, owner, 'PX', lease)
    end
  end
  out[i + 1] = token
end
return out
