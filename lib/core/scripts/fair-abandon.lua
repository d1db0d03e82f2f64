-- Fair lock: a waiter that gave up (timeout, abort, shutdown) leaves the queue at once (with fair
-- cohorts: the last local waiter of its process takes the process' entry out); when it was the head
-- of a free lock, the next entry (only it) is woken to take it.
-- KEYS[1] lock hash   KEYS[2] queue zset   KEYS[3] deadlines hash
-- ARGV[1] queue entry (owner id, or process id with fair cohorts)   ARGV[2] wake-up channel
-- ARGV[3] 'PUBLISH' or 'SPUBLISH'
-- Returns 1 left the queue, 0 was not in it.
local lock, queue, deadlines = KEYS[1], KEYS[2], KEYS[3]
local dt = redis.call('TYPE', deadlines).ok
if redis.call('TYPE', queue).ok ~= 'zset' or (dt ~= 'hash' and dt ~= 'none') then return 0 end
local head = redis.call('ZRANGE', queue, 0, 0)[1]
if redis.call('ZREM', queue, ARGV[1]) == 0 then return 0 end
redis.call('HDEL', deadlines, ARGV[1])
if head == ARGV[1] and redis.call('EXISTS', lock) == 0 then
  -- Only the new head may take the free lock: wake just that waiter.
  local next = redis.call('ZRANGE', queue, 0, 0)[1]
  if next then redis.call(ARGV[3], ARGV[2], '@' .. next) end
end
return 1
