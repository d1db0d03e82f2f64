-- RedLock: raise a lock's fencing counter on this node to at least the token a quorum grant handed
-- out. Every later majority shares a node with this one, so its tokens start above this one.
-- KEYS[1] fence counter
-- ARGV[1] token (the maximum of the granting nodes' tokens)   ARGV[2] fence ttl ms
-- Returns the counter after the call (>= ARGV[1]).
--!include args.lua
check_ms(ARGV[2], 'fence ttl ms')
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local token = tonumber(ARGV[1])
if token > current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return token
end
-- Keep the counter as long as a grant here would have kept it.
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return current
