-- Force-release audit: the newest entries of the capped stream.
-- KEYS[1] audit stream
-- ARGV[1] how many entries to read at most
-- Returns XREVRANGE's reply: { {id, {field, value, ...}}, ... } (empty when there is no stream).
if redis.call('TYPE', KEYS[1]).ok ~= 'stream' then return {} end
return redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', ARGV[1])
