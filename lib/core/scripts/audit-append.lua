-- Force-release audit: append one entry to the capped stream and keep the stream alive.
-- KEYS[1] audit stream
-- ARGV[1] approximate maximum length   ARGV[2] stream ttl ms   ARGV[3..] field, value, ...
-- Returns the entry id.
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return id
