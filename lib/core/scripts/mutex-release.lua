-- Reentrant mutex (and the fair lock's holder): release one hold; the last hold deletes the lock and
-- wakes the waiters: when one marked this grant (' w' or `w`, mutex-acquire.lua); for the fair lock
-- (ARGV[5] = '1', KEYS[2] = its queue) only the queue's head, by a message '@' .. its owner id. A cohort
-- that ended at its bound (ARGV[6] = its process) reserves the lock for the process that has waited
-- longest, for ARGV[7] ms: the key stays as { x = '+' .. that process }, which every other owner finds busy,
-- and only that process is woken ('@' .. its id).
-- KEYS[1] lock (a string of one hold, or a hash)   KEYS[2] waiters zset (the fair lock: its queue)
-- ARGV[1] owner id   ARGV[2] hold id
-- Optional, in order (the common call leaves them out): ARGV[3] wake-up channel (absent or '': KEYS[1]
-- .. ':ch', the lock's channel when the keys reach Redis as named)
-- ARGV[4] 'PUBLISH' or 'SPUBLISH' (absent: PUBLISH)   ARGV[5] '1' = always publish
-- ARGV[6] releasing process at its cohort bound (absent or '' = none)   ARGV[7] ms
-- Returns 1 released (lock gone), 2 this hold removed but nested holds remain, 0 not held
-- (expired, taken over, or this hold already released: a retried release changes nothing).
--!include args.lua
local keep_out = ARGV[6] or ''
if keep_out ~= '' then check_ms(ARGV[7], 'yield ms') end
local lock = KEYS[1]

-- The channel and command are worked out only when a wake-up goes out.
local function publish(message)
  local channel = (ARGV[3] or '') ~= '' and ARGV[3] or lock .. ':ch'
  if ARGV[4] then
    redis.call(ARGV[4], channel, message)
  else
    redis.call('PUBLISH', channel, message)
  end
end

-- The lock is gone now: reserve it at a cohort's bound, and wake the waiters when one marked the grant
-- (or, for a hash without the mark, layout 1, when the waiters zset has anyone).
local function wake(marked, unmarkable)
  -- The waiters zset is read only to reserve the lock, or for a hash without the mark (layout 1).
  local waiting = (keep_out ~= '' or unmarkable) and redis.call('ZRANGE', KEYS[2], 0, 1) or nil
  if keep_out ~= '' then
    local next = waiting[1] == keep_out and waiting[2] or waiting[1]
    if next then
      redis.call('HSET', lock, 'x', '+' .. next)
      redis.call('PEXPIRE', lock, ARGV[7])
      -- Reserved once: a live process records itself again if it still waits, a dead one is forgotten.
      redis.call('ZREM', KEYS[2], next)
      -- Only that process can take the lock now: a directed wake-up ('@' .. its id) wakes its waiters
      -- alone. Every other waiter would find the reservation busy, and could neither mark it nor
      -- record itself anew (it is in the zset already); it waits for its own turn or its backoff.
      -- Waiters that do not name themselves (other kinds, earlier versions) hear it as any message.
      publish('@' .. next)
      return 1
    end
  end
  if marked or (waiting and #waiting > 0) then publish('released') end
  return 1
end

-- One hold: the string of single-hold.lua (its layout only: the file is not included). GET under pcall:
-- a hash (nested holds, the fair lock's holder, an earlier layout) answers WRONGTYPE and is read below.
if ARGV[5] ~= '1' then
  local value = redis.pcall('GET', lock)
  if not value then return 0 end
  if type(value) == 'string' then
    -- single_hold's owner and hold are ARGV[1] and ARGV[2] exactly when the string starts with them
    -- and a space each (ids have no spaces) and a token follows: one comparison and one short match
    -- of the rest instead of four captures of the whole string.
    local prefix = ARGV[1] .. ' ' .. ARGV[2] .. ' '
    if string.sub(value, 1, #prefix) ~= prefix then return 0 end
    local marked = string.match(value, '^%d+(.*)$', #prefix + 1)
    if not marked then return 0 end
    redis.call('DEL', lock)
    return wake(marked ~= '', false)
  end
end
-- One read for every check: the owner, this hold, the hold count and the waiter mark (HMGET under
-- pcall: a key of another type is not ours).
local found = redis.pcall('HMGET', lock, 'owner', ARGV[2], 'n', 'w')
if type(found) ~= 'table' or found.err or found[1] ~= ARGV[1] or not found[2] then return 0 end
-- The holds: `n`, or for a hash without it (the fair lock's holder) the fields besides owner and fence.
local n = tonumber(found[3]) or redis.call('HLEN', lock) - 2
if n > 1 then
  redis.call('HDEL', lock, ARGV[2])
  if found[3] then redis.call('HSET', lock, 'n', n - 1) end
  return 2
end
redis.call('DEL', lock)
if ARGV[5] == '1' then
  -- The fair lock: KEYS[2] is its queue; only its head may take the lock, so only the head is woken.
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if head then publish('@' .. head) end
  return 1
end
return wake(found[4] ~= false, not found[3])
