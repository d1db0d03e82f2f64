-- Watchdog and extend() for the shared-holder kinds (read-write lock, semaphore): renews each
-- holder's own lease, many locks per call. A lease of 0 only checks that the holder still holds.
-- KEYS[2i-1] lock hash of request i   KEYS[2i] holders zset of request i
-- ARGV[2i-1] owner of request i       ARGV[2i] new lease ms of request i (0: check only)
-- Returns one entry per request: 1 held (and renewed), 0 gone (its lease ran out, or the keys were deleted).
--!include holders.lua
--!include args.lua
for i = 1, #KEYS / 2 do check_ms(ARGV[2 * i], 'lease ms', 0) end
local now = now_ms()
local out = {}
for i = 1, #KEYS / 2 do
  local hash, zset = KEYS[2 * i - 1], KEYS[2 * i]
  local owner, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  out[i] = 0
  if redis.call('TYPE', zset).ok == 'zset' and not foreign(hash, zset) then
    local score = tonumber(redis.call('ZSCORE', zset, owner) or '0')
    if score > now then
      if lease > 0 then redis.call('ZADD', zset, fmt(now + lease), owner) end
      out[i] = 1
    else
      prune(hash, zset, now)
    end
    sync_ttl(hash, zset, now)
  end
end
return out
