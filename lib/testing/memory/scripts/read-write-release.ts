import { foreign, holdsRemove, nowMs, prune, syncTtl } from './holders';
import { ScriptPort } from './lua';

/** read-write-release.lua: release one hold; wake waiters when the last holder or the writer left. */
export const readWriteRelease: ScriptPort = (redis, KEYS, ARGV) => {
  const [hash, zset] = [KEYS[1]!, KEYS[2]!];
  const [owner, hold] = [ARGV[1]!, ARGV[2]!];
  if (foreign(redis, hash, zset)) return 0;
  const now = nowMs(redis);
  let wake = prune(redis, hash, zset, now) > 0;
  let result = 0;
  const list = redis.hget(hash, 'o:' + owner);
  const removed = list !== null ? holdsRemove(list, hold) : false;
  if (removed) {
    const [rest, mode] = removed;
    if (mode === 'w' && !(' ' + rest).includes(' w:')) {
      redis.hdel(hash, 'writer');
      wake = true;
    }
    if (rest === '') {
      redis.hdel(hash, 'o:' + owner);
      redis.zrem(zset, owner);
      if (redis.zcard(zset) === 0) wake = true;
      result = 1;
    } else {
      redis.hset(hash, 'o:' + owner, rest);
      result = 2;
    }
  }
  syncTtl(redis, hash, zset, now);
  if (wake) redis.publish(ARGV[3]!, 'released');
  return result;
};
