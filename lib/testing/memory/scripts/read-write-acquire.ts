import { checkMs } from './args';
import { nextFence } from './fence';
import { extendTo, foreign, holdsAdd, lastDeadline, nowMs, prune, syncTtl } from './holders';
import { fmt, ScriptPort, tonumber } from './lua';

/** read-write-acquire.lua: take a read or a write hold, or re-enter; a refused writer leaves a marker. */
export const readWriteAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  checkMs(ARGV[4], 'lease ms');
  checkMs(ARGV[5], 'fence ttl ms');
  checkMs(ARGV[7], 'marker ttl ms');
  const [hash, zset] = [KEYS[1]!, KEYS[2]!];
  const [owner, hold, mode] = [ARGV[1]!, ARGV[2]!, ARGV[3]!];
  const lease = Number(ARGV[4]);
  const bad = foreign(redis, hash, zset);
  if (bad) return bad;
  const now = nowMs(redis);
  // A holder whose lease ran out frees its share: wake the other waiters too.
  if (prune(redis, hash, zset, now) > 0) redis.publish(ARGV[8]!, 'released');
  const writer = redis.hget(hash, 'writer');

  if (redis.hexists(hash, 'o:' + owner)) {
    if (mode === 'w' && writer !== owner) return [-3];
    holdsAdd(redis, hash, owner, mode + ':' + hold);
    extendTo(redis, zset, owner, now + lease);
    syncTtl(redis, hash, zset, now);
    return [2, 0];
  }
  if (ARGV[6] === '1') return [-2];

  let marker = redis.hget(hash, 'ww');
  if (marker !== null && (tonumber(redis.hget(hash, 'wwx') ?? '0') ?? 0) <= now) {
    redis.hdel(hash, 'ww', 'wwx');
    marker = null;
  }
  const holders = redis.zcard(zset);

  if (mode === 'w') {
    if (holders > 0) {
      // The first waiting writer owns the marker; other writers compete when the lock frees.
      if (marker === null || marker === owner) {
        redis.hset(hash, 'ww', owner, 'wwx', fmt(now + Number(ARGV[7])));
      }
      syncTtl(redis, hash, zset, now);
      return [0, lastDeadline(redis, zset) - now];
    }
    if (marker === owner) redis.hdel(hash, 'ww', 'wwx');
    redis.hset(hash, 'writer', owner);
  } else {
    if (writer !== null) return [0, lastDeadline(redis, zset) - now];
    if (marker !== null) return [0, -1];
  }

  redis.hset(hash, 'o:' + owner, mode + ':' + hold);
  redis.zadd(zset, now + lease, owner);
  const token = nextFence(redis, KEYS[3]!, ARGV[5]!);
  syncTtl(redis, hash, zset, now);
  return [1, token];
};
