import { releaseEnd, releaseStart } from './holders';
import { ScriptPort } from './lua';

/** read-write-release.lua: release one hold; wake waiters when the last holder or the writer left. */
export const readWriteRelease: ScriptPort = (redis, KEYS, ARGV) => {
  const release = releaseStart(redis, KEYS, ARGV);
  if (!release) return 0;
  const [hash, zset, owner] = [KEYS[1]!, KEYS[2]!, ARGV[1]!];
  const { rest, mode } = release;
  let result = 0;
  if (rest !== false) {
    if (mode === 'w' && !(' ' + rest).includes(' w:')) {
      redis.hdel(hash, 'writer');
      release.wake = true;
    }
    if (rest === '') {
      redis.hdel(hash, 'o:' + owner);
      redis.zrem(zset, owner);
      if (redis.zcard(zset) === 0) release.wake = true;
      result = 1;
    } else {
      redis.hset(hash, 'o:' + owner, rest);
      result = 2;
    }
  }
  return releaseEnd(redis, KEYS, ARGV, { release, result });
};
