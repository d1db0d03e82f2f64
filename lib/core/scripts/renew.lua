-- Watchdog and extend(): renew many locks in one call (mutex strings and hashes, token-lock strings).
-- With a lease of 0 it only checks (a connection came back: are the locks still there?) and renews
-- nothing. A string's owner is its first word: a mutex of one hold is '<owner> <hold id> <token>[ w]',
-- a token lock only '<owner>'.
-- KEYS[i] lock key
-- ARGV[2i-1] owner id of KEYS[i]   ARGV[2i] new lease ms of KEYS[i] (0: check only)
-- Returns one entry per key: 1 held (and renewed), 0 gone (expired or deleted), -1 held by another owner.
--!include args.lua
for i = 1, #KEYS do check_ms(ARGV[2 * i], 'lease ms', 0) end
local out = {}
for i = 1, #KEYS do
  local owner = ARGV[2 * i - 1]
  local kind = redis.call('TYPE', KEYS[i]).ok
  local current = false
  if kind == 'hash' then
    current = redis.call('HGET', KEYS[i], 'owner')
  elseif kind == 'string' then
    current = string.match(redis.call('GET', KEYS[i]), '^%S*')
  end
  if current == owner then
    if ARGV[2 * i] ~= '0' then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i]) end
    out[i] = 1
  elseif kind == 'none' then
    out[i] = 0
  else
    out[i] = -1
  end
end
return out
