-- Reentrant mutex: acquire, or re-enter when the owner already holds it.
-- One hold (the common case) is a string '<owner> <hold id> <token>', with ' w' appended once a waiter
-- found it busy: a grant is one SET PX, a release one GET and one DEL. A second hold turns it into a
-- hash { owner = <owner id>, fence = <token>, n = <holds>, <hold id> = 1 ..., w = 1 }: one field per
-- hold, so every release names its own hold and a retried release can never remove two holds; `n`
-- counts the holds, so a release reads one field instead of counting them. `w` (or ' w') marks that a
-- waiter found this grant busy: the release publishes a wake-up only then. Waiters are recorded in the
-- `waiters` zset too (process -> first wait, server µs): a cohort ending at its bound reserves the lock
-- for the process that has waited longest (see mutex-release.lua: the key is then { x = '+' .. process }).
-- A token lock (token-acquire.lua) is a string too, holding only its owner id: ids have no spaces.
-- Earlier layouts: 0.2.0's hash had neither `n` nor `w` (its release counted fields with HLEN), 0.3.0's
-- had both but no string form; a waiter marks only hashes that have `n`, and every earlier layout finds
-- a string with a lease busy (it took it for a token lock), so the layouts exclude each other.
-- KEYS[1] lock   KEYS[2] fence counter   KEYS[3] waiters zset
-- ARGV[1] owner id    ARGV[2] hold id    ARGV[3] lease ms    ARGV[4] fence ttl ms
-- Optional, in order (the common call leaves the trailing ones out):
-- ARGV[5] fencing tokens to reserve (>= 1; default 1)
-- ARGV[6] the caller's process id (default, or '': the owner id)
-- ARGV[7] '1' = the caller's process may be recorded in the waiters zset (remove it on a grant)
-- ARGV[8] '1' = re-entry only (never a fresh grant)
-- Returns {1, token} granted, {2, token} re-entered, {0, pttl} busy, {-2} re-entry but not held,
--         {-1, type} the key holds data that is not a lock (left untouched).
--!include fence.lua
--!include args.lua
--!include single-hold.lua
local lock = KEYS[1]
local process = (ARGV[6] or '') ~= '' and ARGV[6] or ARGV[1]
local recorded = ARGV[7] == '1'
local reenter_only = ARGV[8] == '1'

-- `mark`: a function that marks the grant as waited for (nil: already marked, or not markable).
local function busy(pttl, mark)
  if reenter_only then return {-2} end
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[3], 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), process)
  redis.call('PEXPIRE', KEYS[3], pttl + 2000)
  if mark then mark() end
  return {0, pttl}
end

local function grant()
  -- Checked before the first write: a bad argument is an error reply, never a lock without a TTL.
  check_ms(ARGV[3], 'lease ms'); check_ms(ARGV[4], 'fence ttl ms')
  local token = next_fence(KEYS[2], ARGV[4], check_ms(ARGV[5] or '1', 'tokens to reserve'))
  redis.call('SET', lock, ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. string.format('%.0f', token), 'PX', ARGV[3])
  if recorded then redis.call('ZREM', KEYS[3], process) end
  return {1, token}
end

-- The common case first: a free key (PTTL -2) is granted without reading anything else.
local pttl = redis.call('PTTL', lock)
if pttl == -2 then
  if reenter_only then return {-2} end
  return grant()
end
-- One read for the rest: GET (a string: one hold, or a token lock), else HMGET (both under pcall: a
-- key of another type is neither).
local value = redis.pcall('GET', lock)
if type(value) == 'string' then
  if pttl < 0 then return {-1, 'string'} end
  local owner, hold, token, marked = single_hold(value)
  -- No spaces: a token lock of the same name, busy (its release always publishes).
  if not owner then return busy(pttl, nil) end
  if owner ~= ARGV[1] then
    return busy(pttl, marked == '' and function()
      redis.call('SET', lock, value .. ' w', 'KEEPTTL')
    end or nil)
  end
  check_ms(ARGV[3], 'lease ms')
  -- The same hold: this very call, sent again (a reply lost with the connection).
  if hold ~= ARGV[2] then
    add_second_hold(lock, owner, hold, token, marked, pttl, ARGV[3], ARGV[2])
  elseif pttl < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', lock, ARGV[3])
  end
  return {2, tonumber(token)}
end
local found = redis.pcall('HMGET', lock, 'owner', 'n', 'w', 'x', ARGV[2], 'fence')
if found.err then return {-1, redis.call('TYPE', lock).ok} end
local owner, n = found[1], tonumber(found[2])
if owner == ARGV[1] then
  check_ms(ARGV[3], 'lease ms')
  -- A hold already there is this very re-entry, sent again (a reply lost with the connection).
  if not found[5] then redis.call('HSET', lock, ARGV[2], '1', 'n', (n or 1) + 1) end
  if pttl < tonumber(ARGV[3]) then redis.call('PEXPIRE', lock, ARGV[3]) end
  return {2, tonumber(found[6])}
end
if owner then
  if pttl < 0 then return {-1, 'hash'} end
  return busy(pttl, n ~= nil and not found[3] and function()
    redis.call('HSET', lock, 'w', '1')
  end or nil)
end
-- No owner field on an existing key: a lock reserved for one process for a moment, or a hash that is
-- not a lock.
local reserved = found[4]
if not reserved or pttl < 0 then return {-1, 'hash'} end
if reserved ~= '+' .. process then return busy(pttl, nil) end
redis.call('DEL', lock)
if reenter_only then return {-2} end
-- The reserved process was recorded as a waiter: always drop it.
recorded = true
return grant()
