import { checkMs } from './args';
import { nextFence } from './fence';
import { extendTo, foreign, holdsAdd, nowMs, permitsUsed, prune, syncTtl } from './holders';
import { fmt, ScriptPort, tonumber } from './lua';

/** semaphore-acquire.lua: take `permits` of `limit` permits (all or none), or re-enter; a refused request reserves. */
export const semaphoreAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  checkMs(ARGV[3], 'limit');
  checkMs(ARGV[4], 'lease ms');
  checkMs(ARGV[5], 'fence ttl ms');
  checkMs(ARGV[9], 'permits');
  checkMs(ARGV[10], 'reservation ttl ms', 0);
  const [hash, zset] = [KEYS[1]!, KEYS[2]!];
  const [owner, hold] = [ARGV[1]!, ARGV[2]!];
  const lease = Number(ARGV[4]);
  const bad = foreign(redis, hash, zset);
  if (bad) return bad;
  const now = nowMs(redis);
  // Expired permits are free again: wake the other waiters to take them.
  if (prune(redis, hash, zset, now) > 0) redis.publish(ARGV[7]!, 'released');

  if (redis.hexists(hash, 'o:' + owner)) {
    holdsAdd(redis, hash, owner, 'p:' + hold);
    extendTo(redis, zset, owner, now + lease);
    syncTtl(redis, hash, zset, now);
    return [2, 0];
  }
  if (ARGV[6] === '1') return [-2];

  const want = Number(ARGV[9]);
  let reserved = redis.hget(hash, 'ww');
  const reservedN = tonumber(redis.hget(hash, 'wwn') ?? '0') ?? 0;
  if (reserved !== null && (tonumber(redis.hget(hash, 'wwx') ?? '0') ?? 0) <= now) {
    redis.hdel(hash, 'ww', 'wwx', 'wwn');
    reserved = null;
  }
  let room = Number(ARGV[3]) - permitsUsed(redis, hash, zset);
  if (reserved !== null && reserved !== owner) room = room - reservedN;
  if (want > room) {
    if (Number(ARGV[10]) > 0 && (reserved === null || reserved === owner || want > reservedN)) {
      redis.hset(hash, 'ww', owner, 'wwn', String(want), 'wwx', fmt(now + Number(ARGV[10])));
    }
    syncTtl(redis, hash, zset, now);
    const first = redis.zrange(zset, 0, 0)[0];
    if (!first) return [0, -1];
    return [0, first[1] - now];
  }
  if (reserved === owner) redis.hdel(hash, 'ww', 'wwx', 'wwn');
  redis.hset(hash, 'o:' + owner, 'p:' + hold);
  if (want > 1) {
    redis.hset(hash, 'n:' + owner, String(want));
    redis.hincrby(hash, 'extra', want - 1);
  }
  redis.zadd(zset, now + lease, owner);
  const token = nextFence(redis, KEYS[3]!, ARGV[5]!);
  syncTtl(redis, hash, zset, now);
  return [1, token];
};
