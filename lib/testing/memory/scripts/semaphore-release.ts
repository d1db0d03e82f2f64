import { dropWeight, foreign, holdsRemove, nowMs, prune, syncTtl } from './holders';
import { ScriptPort } from './lua';

/** semaphore-release.lua: release one hold; the owner's last hold returns its permit(s) and wakes waiters. */
export const semaphoreRelease: ScriptPort = (redis, KEYS, ARGV) => {
  const [hash, zset] = [KEYS[1]!, KEYS[2]!];
  const [owner, hold] = [ARGV[1]!, ARGV[2]!];
  if (foreign(redis, hash, zset)) return 0;
  const now = nowMs(redis);
  let wake = prune(redis, hash, zset, now) > 0;
  let result = 0;
  const list = redis.hget(hash, 'o:' + owner);
  const removed = list !== null ? holdsRemove(list, hold) : false;
  const rest = removed && removed[0];
  if (rest === '') {
    redis.hdel(hash, 'o:' + owner);
    dropWeight(redis, hash, owner);
    redis.zrem(zset, owner);
    wake = true;
    result = 1;
  } else if (rest !== false) {
    redis.hset(hash, 'o:' + owner, rest);
    result = 2;
  }
  syncTtl(redis, hash, zset, now);
  if (wake) redis.publish(ARGV[3]!, 'released');
  return result;
};
