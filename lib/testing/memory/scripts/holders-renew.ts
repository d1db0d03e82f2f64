import { checkMs } from './args';
import { foreign, nowMs, prune, syncTtl } from './holders';
import { count, ScriptPort } from './lua';

/** holders-renew.lua: renew (lease 0: check) each holder's own lease (read-write lock, semaphore); 1 held, 0 gone. */
export const holdersRenew: ScriptPort = (redis, KEYS, ARGV) => {
  for (let i = 1; i <= count(KEYS) / 2; i++) checkMs(ARGV[2 * i], 'lease ms', 0);
  const now = nowMs(redis);
  const out: number[] = [];
  for (let i = 1; i <= count(KEYS) / 2; i++) {
    const [hash, zset] = [KEYS[2 * i - 1]!, KEYS[2 * i]!];
    const [owner, lease] = [ARGV[2 * i - 1]!, Number(ARGV[2 * i])];
    out[i - 1] = 0;
    if (redis.type(zset) === 'zset' && !foreign(redis, hash, zset)) {
      const score = redis.zscore(zset, owner) ?? 0;
      if (score > now) {
        if (lease > 0) redis.zadd(zset, now + lease, owner);
        out[i - 1] = 1;
      } else {
        prune(redis, hash, zset, now);
      }
      syncTtl(redis, hash, zset, now);
    }
  }
  return out;
};
