-- Shared prelude of the reentrant mutex's scripts: a mutex held once is the string
-- '<owner> <hold id> <token>', with ' w' appended once a waiter found it busy (a token lock of the same
-- name is the string '<owner>' alone: ids have no spaces). A second hold turns it into the hash
-- { owner, fence, n, <hold id> = 1 ..., w }.

-- owner, hold id, token, mark ('' or ' w') of a mutex held once; nil for any other string.
local function single_hold(value)
  return string.match(value, '^(%S+) (%S+) (%d+)(.*)$')
end

-- Turns the string of `owner`'s single hold into the hash with a second hold `new_hold`, its lease no
-- shorter than `pttl` (what the string had left) or `lease_ms`, the mark kept.
local function add_second_hold(lock, owner, hold, token, marked, pttl, lease_ms, new_hold)
  redis.call('DEL', lock)
  redis.call('HSET', lock, 'owner', owner, 'fence', token, 'n', '2', hold, '1', new_hold, '1')
  if marked ~= '' then redis.call('HSET', lock, 'w', '1') end
  redis.call('PEXPIRE', lock, math.max(pttl, tonumber(lease_ms)))
end
