-- Start-up check (Redis 7+): may this connection's user run every command the library needs, on a
-- key and a channel under the key prefix? Nothing is read or written.
-- KEYS none
-- ARGV[1] a sample lock key under the prefix   ARGV[2] a sample wake-up channel
-- ARGV[3] 'PUBLISH' or 'SPUBLISH'   ARGV[4] 'SUBSCRIBE' or 'SSUBSCRIBE'
-- ARGV[5] 'UNSUBSCRIBE' or 'SUNSUBSCRIBE'   ARGV[6..] key commands, each as 'NAME arg arg' (the sample key goes before the args)
-- Returns the commands this user may not run there ({} when all may; a channel command is named
-- with the channel), or {'?'} when this Redis cannot tell (no redis.acl_check_cmd before 7.0).
if not redis.acl_check_cmd then return {'?'} end
local key, channel = ARGV[1], ARGV[2]
local denied = {}
for i = 6, #ARGV do
  local words = {}
  for word in string.gmatch(ARGV[i], '%S+') do words[#words + 1] = word end
  local name = table.remove(words, 1)
  if not redis.acl_check_cmd(name, key, unpack(words)) then denied[#denied + 1] = name end
end
if not redis.acl_check_cmd('TIME') then denied[#denied + 1] = 'TIME' end
if not redis.acl_check_cmd(ARGV[3], channel, 'x') then denied[#denied + 1] = ARGV[3] .. ' ' .. channel end
for i = 4, 5 do
  if not redis.acl_check_cmd(ARGV[i], channel) then denied[#denied + 1] = ARGV[i] .. ' ' .. channel end
end
return denied
