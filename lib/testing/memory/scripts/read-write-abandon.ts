import { foreign, nowMs, syncTtl } from './holders';
import { ScriptPort } from './lua';

/** read-write-abandon.lua: drop this owner's writer marker or permit reservation, and wake the waiters. */
export const readWriteAbandon: ScriptPort = (redis, KEYS, ARGV) => {
  const [hash, zset] = [KEYS[1]!, KEYS[2]!];
  if (foreign(redis, hash, zset)) return 0;
  if (redis.hget(hash, 'ww') !== ARGV[1]) return 0;
  redis.hdel(hash, 'ww', 'wwx', 'wwn');
  syncTtl(redis, hash, zset, nowMs(redis));
  redis.publish(ARGV[2]!, 'released');
  return 1;
};
