-- Fair lock: FIFO across processes. The holder is a hash in the reentrant mutex's format
-- { owner, fence, <hold id> = 1 ... } (so release and renewal are the mutex's scripts); the waiters
-- queue in Redis: a zset ordered by ticket (arrival) and a hash of per-entry deadlines in server ms.
-- An entry is one waiter (its owner id), or with fair cohorts one process (its process id: only the
-- process' head local waiter attempts, its other waiters queue locally behind it). Each attempt keeps
-- the entry's place and pushes its deadline to now + waiter ttl; an entry whose waiter died or stopped
-- attempting is dropped when it reaches the head with its deadline passed, so it can stall the queue
-- at most one waiter ttl. Only the head of the queue may take a free lock.
-- KEYS[1] lock hash   KEYS[2] queue zset (entry -> ticket)   KEYS[3] deadlines hash (entry -> ms)
-- KEYS[4] fence counter
-- ARGV[1] owner id    ARGV[2] hold id   ARGV[3] lease ms   ARGV[4] fence ttl ms
-- ARGV[5] '1' = re-entry only   ARGV[6] waiter ttl ms   ARGV[7] wake-up channel   ARGV[8] 'PUBLISH' or 'SPUBLISH'
-- ARGV[9] fencing tokens to reserve (>= 1: a cohort's local hand-offs take the ones after the grant's)
-- ARGV[10] the queue entry: the caller's process id (fair cohorts), or '' = the owner id
-- Returns {1, token} granted, {2, token} re-entered, {0, holder's pttl, or -1 when waiting for
--         earlier waiters} busy (queued), {-2} re-entry but not held, {-1, type, i} KEYS[i] is foreign.
--!include fence.lua
--!include args.lua
check_ms(ARGV[3], 'lease ms'); check_ms(ARGV[4], 'fence ttl ms'); check_ms(ARGV[6], 'waiter ttl ms')
check_ms(ARGV[9], 'tokens to reserve')
local lock, queue, deadlines = KEYS[1], KEYS[2], KEYS[3]
local owner = ARGV[1]
local entry = ARGV[10] ~= '' and ARGV[10] or owner
local wanted = { 'hash', 'zset', 'hash' }
for i = 1, 3 do
  local kind = redis.call('TYPE', KEYS[i]).ok
  if kind ~= 'none' and (kind ~= wanted[i] or redis.call('PTTL', KEYS[i]) < 0) then return {-1, kind, i} end
end

local held = redis.call('EXISTS', lock) == 1
if held and redis.call('HGET', lock, 'owner') == owner then
  redis.call('HSET', lock, ARGV[2], '1')
  if redis.call('PTTL', lock) < tonumber(ARGV[3]) then redis.call('PEXPIRE', lock, ARGV[3]) end
  return {2, tonumber(redis.call('HGET', lock, 'fence'))}
end
if ARGV[5] == '1' then return {-2} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[6])
-- Join at the tail, or keep the place taken by an earlier attempt.
if not redis.call('ZSCORE', queue, entry) then
  local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  redis.call('ZADD', queue, last[2] and (tonumber(last[2]) + 1) or 1, entry)
end
redis.call('HSET', deadlines, entry, string.format('%.0f', now + ttl))
-- Every deadline is at most now + ttl, so the queue's keys outlive all of them.
redis.call('PEXPIRE', queue, ttl)
redis.call('PEXPIRE', deadlines, ttl)

-- Drop dead waiters from the head (a dead waiter further back is dropped when it gets there).
local head, dropped = nil, false
while true do
  head = redis.call('ZRANGE', queue, 0, 0)[1]
  if head == entry then break end
  if (tonumber(redis.call('HGET', deadlines, head) or '0') or 0) > now then break end
  redis.call('ZREM', queue, head)
  redis.call('HDEL', deadlines, head)
  dropped = true
end

if held then return {0, redis.call('PTTL', lock)} end
if head ~= entry then
  -- A free lock whose head waiter just changed: let the new head try at once.
  if dropped then redis.call(ARGV[8], ARGV[7], '@' .. head) end
  return {0, -1}
end
redis.call('ZREM', queue, entry)
redis.call('HDEL', deadlines, entry)
local token = next_fence(KEYS[4], ARGV[4], tonumber(ARGV[9]))
redis.call('HSET', lock, 'owner', owner, 'fence', string.format('%.0f', token), ARGV[2], '1')
redis.call('PEXPIRE', lock, ARGV[3])
return {1, token}
