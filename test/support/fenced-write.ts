/**
 * The storage side of fencing, as the sample app's FencedStore does it: a record remembers the
 * highest token it accepted and refuses a write with a lower one.
 * KEYS[1] record   ARGV[1] the writer's fencing token
 * Returns {1, token} accepted, {0, last accepted token} refused (stale writer).
 */
export const FENCED_WRITE_LUA = `
local last = redis.call('HGET', KEYS[1], 'fence') or '0'
if tonumber(ARGV[1]) < tonumber(last) then return {0, last} end
redis.call('HSET', KEYS[1], 'fence', ARGV[1])
redis.call('PEXPIRE', KEYS[1], 600000)
return {1, ARGV[1]}
`;
