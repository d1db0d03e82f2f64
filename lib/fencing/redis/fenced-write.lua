-- A fenced write on a Redis resource: applies the write only when the fence rule admits the token.
-- KEYS[1] the data key   KEYS[2] its fence record (a hash: fence, owner)
-- ARGV[1] token (decimal digits)   ARGV[2] owner   ARGV[3] operation: set | hset | del | claim
-- ARGV[4..] the operation's arguments: set → value [, px ms]; hset → field, value, …; del, claim → none
-- Returns {1} when written (the fence record then holds token and owner), or {0, stored fence, stored owner}
-- when refused (nothing written).
-- Tokens are compared as decimal strings (length first, then digits), so they are exact up to 2^63
-- where Lua's doubles would round above 2^53.
local token, owner, op = ARGV[1], ARGV[2], ARGV[3]
local stored = redis.call('HMGET', KEYS[2], 'fence', 'owner')
local fence, fence_owner = stored[1], stored[2]

local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

if fence and not (less(fence, token) or (fence == token and fence_owner == owner)) then
  return {0, fence, fence_owner or ''}
end

if op == 'set' then
  if ARGV[5] then
    redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
  else
    redis.call('SET', KEYS[1], ARGV[4])
  end
elseif op == 'hset' then
  redis.call('HSET', KEYS[1], unpack(ARGV, 4))
elseif op == 'del' then
  redis.call('DEL', KEYS[1])
elseif op ~= 'claim' then
  return redis.error_reply('ERR fenced-write: unknown operation ' .. tostring(op))
end
redis.call('HSET', KEYS[2], 'fence', token, 'owner', owner)
return {1}
