-- Reentrant mutex (and the fair lock's holder): release one hold; the last hold deletes the lock and
-- wakes the waiters: when one is recorded (mutex-acquire.lua's `waiters` zset); for the fair lock
-- (ARGV[5] = '1', KEYS[2] = its queue) only the queue's head, by a message '@' .. its owner id. A cohort that ended at its bound
-- (ARGV[6] = its process) reserves the lock for the process that has waited longest, for ARGV[7] ms:
-- the key stays as { x = '+' .. that process }, which every other owner finds busy.
-- KEYS[1] lock hash   KEYS[2] waiters zset (the fair lock: its queue)
-- ARGV[1] owner id   ARGV[2] hold id   ARGV[3] wake-up channel   ARGV[4] 'PUBLISH' or 'SPUBLISH'
-- Optional (the common call leaves them out): ARGV[5] '1' = always publish
-- ARGV[6] releasing process at its cohort bound (absent or '' = none)   ARGV[7] ms
-- Returns 1 released (lock gone), 2 this hold removed but nested holds remain, 0 not held
-- (expired, taken over, or this hold already released: a retried release changes nothing).
--!include args.lua
local keep_out = ARGV[6] or ''
if keep_out ~= '' then check_ms(ARGV[7], 'yield ms') end
local lock = KEYS[1]
-- One read for both checks: the owner, and this hold (HMGET under pcall: a non-hash is not ours).
local found = redis.pcall('HMGET', lock, 'owner', ARGV[2])
if type(found) ~= 'table' or found.err or found[1] ~= ARGV[1] or not found[2] then return 0 end
-- Other holds left (fields besides owner, fence and this hold): remove only this one.
if redis.call('HLEN', lock) > 3 then
  redis.call('HDEL', lock, ARGV[2])
  return 2
end
redis.call('DEL', lock)
local waiting = ARGV[5] ~= '1' and redis.call('ZRANGE', KEYS[2], 0, 1) or {}
if keep_out ~= '' then
  local next = waiting[1] == keep_out and waiting[2] or waiting[1]
  if next then
    redis.call('HSET', lock, 'x', '+' .. next)
    redis.call('PEXPIRE', lock, ARGV[7])
    -- Reserved once: a live process records itself again if it still waits, a dead one is forgotten.
    redis.call('ZREM', KEYS[2], next)
  end
end
if ARGV[5] == '1' then
  -- The fair lock: KEYS[2] is its queue; only its head may take the lock, so only the head is woken.
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if head then redis.call(ARGV[4], ARGV[3], '@' .. head) end
elseif #waiting > 0 then
  redis.call(ARGV[4], ARGV[3], 'released')
end
return 1
