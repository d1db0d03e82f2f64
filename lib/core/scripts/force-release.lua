-- Force release (an operator's decision): evict every holder of one lock kind, advance the fence,
-- wake the waiters, and tell each evicted holder's engine (a JSON notice PUBLISHed on its notice
-- channel, in the same step: a renewal that finds the key gone runs after the notice went out).
-- KEYS[1] lock key of the kind   KEYS[2] its aux zset (mutex waiters / fair queue / holders)
-- KEYS[3] fence counter
-- ARGV[1] kind tag ('m', 'rw', 'fair', 'sem')   ARGV[2] wake-up channel   ARGV[3] 'PUBLISH' or 'SPUBLISH'
-- ARGV[4] fence ttl ms   ARGV[5] for 'm': 'mutex' (reentrant mutex only), 'token' (token lock only) or 'any'
-- ARGV[6] notice channel stem (the engine id is appended)   ARGV[7] the user's key   ARGV[8] reason
-- ARGV[9] who releases
-- Returns {0} nothing held, {-1, type} the key holds data that is not a lock (left untouched), or
--         {1, fence, kind, owner, token, holds, mode, permits, ...}: `kind` is 'mutex', 'token',
--         'read-write', 'fair' or 'semaphore', then one group of five per evicted holder;
--         `fence` is the token the counter was advanced to (every later grant gets a higher one);
--         `token` is the holder's grant token when Redis keeps it ('0' for readers and permits).
--!include fence.lua
--!include single-hold.lua
local lock, aux = KEYS[1], KEYS[2]
local tag = ARGV[1]
local evicted = {}
local label = ({ rw = 'read-write', fair = 'fair', sem = 'semaphore' })[tag] or 'mutex'
local function add(owner, token, holds, mode, permits)
  evicted[#evicted + 1] = owner
  evicted[#evicted + 1] = token or '0'
  evicted[#evicted + 1] = holds
  evicted[#evicted + 1] = mode or ''
  evicted[#evicted + 1] = permits or 1
end

local kind = redis.call('TYPE', lock).ok
if kind == 'none' then return {0} end
if redis.call('PTTL', lock) < 0 then return {-1, kind} end
if tag == 'm' or tag == 'fair' then
  -- A string is a mutex of one hold or a token lock (single-hold.lua).
  local value = kind == 'string' and tag == 'm' and redis.call('GET', lock)
  local owner, _, token = single_hold(value or '')
  if value and not owner and ARGV[5] ~= 'mutex' then
    add(value, '0', 1)
    label = 'token'
  elseif owner and ARGV[5] ~= 'token' then
    add(owner, token, 1)
  elseif kind == 'hash' and (tag == 'fair' or ARGV[5] ~= 'token') then
    owner = redis.call('HGET', lock, 'owner')
    -- No owner: a lock reserved for a moment for one waiting process, held by nobody.
    if not owner then return {0} end
    -- The holds: `n` (mutex-acquire.lua), or the fields besides owner and fence (the fair lock's holder).
    local holds = tonumber(redis.call('HGET', lock, 'n')) or redis.call('HLEN', lock) - 2
    add(owner, redis.call('HGET', lock, 'fence') or '0', holds)
  elseif kind == 'hash' or kind == 'string' then
    return {0}
  else
    return {-1, kind}
  end
  redis.call('DEL', lock)
else
  if kind ~= 'hash' then return {-1, kind} end
  local writer = redis.call('HGET', lock, 'writer')
  local holders = redis.call('ZRANGE', aux, 0, -1)
  for _, owner in ipairs(holders) do
    local list = redis.call('HGET', lock, 'o:' .. owner) or ''
    local _, holds = string.gsub(list, '%S+', '')
    local mode = tag == 'rw' and (owner == writer and 'write' or 'read') or ''
    add(owner, '0', holds, mode, tonumber(redis.call('HGET', lock, 'n:' .. owner) or '1'))
  end
  if #holders == 0 then return {0} end
  redis.call('DEL', lock, aux)
end

local fence = next_fence(KEYS[3], ARGV[4], 1)
if tag == 'fair' then
  -- Only the queue's head may take a fair lock: wake it (the others keep their places).
  local head = redis.call('ZRANGE', aux, 0, 0)[1]
  if head then redis.call(ARGV[3], ARGV[2], '@' .. head) end
else
  redis.call(ARGV[3], ARGV[2], 'released')
end
-- Notices are plain PUBLISH (never sharded): each engine hears them on its own notice channel (a plain SUBSCRIBE).
for i = 1, #evicted, 5 do
  local owner = evicted[i]
  redis.call('PUBLISH', ARGV[6] .. string.match(owner, '^[^.]*'), cjson.encode({
    type = 'force-released', lock = lock, owner = owner, key = ARGV[7], reason = ARGV[8], by = ARGV[9],
  }))
end
local out = { 1, string.format('%.0f', fence), label }
for _, v in ipairs(evicted) do out[#out + 1] = v end
return out
