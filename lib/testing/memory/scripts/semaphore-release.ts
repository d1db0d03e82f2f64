import { dropWeight, releaseEnd, releaseStart } from './holders';
import { ScriptPort } from './lua';

/** semaphore-release.lua: release one hold; the owner's last hold returns its permit(s) and wakes waiters. */
export const semaphoreRelease: ScriptPort = (redis, KEYS, ARGV) => {
  const release = releaseStart(redis, KEYS, ARGV);
  if (!release) return 0;
  const [hash, zset, owner] = [KEYS[1]!, KEYS[2]!, ARGV[1]!];
  const { rest } = release;
  let result = 0;
  if (rest === '') {
    redis.hdel(hash, 'o:' + owner);
    dropWeight(redis, hash, owner);
    redis.zrem(zset, owner);
    release.wake = true;
    result = 1;
  } else if (rest !== false) {
    redis.hset(hash, 'o:' + owner, rest);
    result = 2;
  }
  return releaseEnd(redis, KEYS, ARGV, { release, result });
};
