import { checkMs } from './args';
import { nextFence } from './fence';
import { count, fmt, LuaValue, ScriptPort, tonumber } from './lua';

/**
 * multi-acquire.lua: several mutexes (hashes) or token locks (strings) at once, all or none, each
 * written as its single-key script would; a busy mutex records this caller as a waiter.
 */
export const multiAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  checkMs(ARGV[3], 'lease ms');
  checkMs(ARGV[4], 'fence ttl ms');
  const n = count(KEYS) / 3;
  const [owner, hold, lease, hash] = [ARGV[1]!, ARGV[2]!, ARGV[3]!, ARGV[5] === '1'];
  const ours = new Set<number>();
  const reservedForUs = new Set<number>();

  const busy = (i: number, pttl: number, kind: string): LuaValue => {
    if (kind === 'hash') {
      // Record a waiter on a mutex, so its release publishes a wake-up (mutex-release.lua).
      const lock = KEYS[3 * i - 2]!;
      redis.zadd(KEYS[3 * i]!, redis.nowUs(), owner, true);
      redis.pexpire(KEYS[3 * i]!, pttl + 2000);
      if (redis.hexists(lock, 'n')) redis.hset(lock, 'w', '1');
    }
    return [0, pttl, i];
  };

  for (let i = 1; i <= n; i++) {
    const lock = KEYS[3 * i - 2]!;
    const kind = redis.type(lock);
    if (kind !== 'none') {
      const pttl = redis.pttl(lock);
      if ((kind !== 'hash' && kind !== 'string') || pttl < 0) return [-1, kind, i];
      const holder = kind === 'hash' ? redis.hget(lock, 'owner') : redis.get(lock);
      if (holder === null) {
        const reserved = kind === 'hash' && redis.hget(lock, 'x');
        // A hash without an owner is not a lock (Lua: only nil and false are false, '' is true).
        if (reserved === false || reserved === null) return [-1, kind, i];
        if (reserved !== '+' + owner) return busy(i, pttl, kind);
        reservedForUs.add(i);
      } else if (holder !== owner || (kind === 'hash') !== hash) {
        return busy(i, pttl, kind);
      } else {
        ours.add(i);
      }
    }
  }
  const out: LuaValue[] = [1];
  for (let i = 1; i <= n; i++) {
    const [lock, fence] = [KEYS[3 * i - 2]!, KEYS[3 * i - 1]!];
    if (reservedForUs.has(i)) redis.del(lock);
    if (hash) redis.zrem(KEYS[3 * i]!, owner);
    let token: number | undefined;
    if (ours.has(i)) {
      if (hash) {
        // One more hold, counted (a hold already there is this call, sent again).
        if (!redis.hexists(lock, hold)) {
          redis.hset(lock, hold, '1');
          redis.hincrby(lock, 'n', 1);
        }
        token = tonumber(redis.hget(lock, 'fence'));
      } else {
        token = tonumber(redis.get(fence)) ?? nextFence(redis, fence, ARGV[4]!, 1);
      }
    } else {
      token = nextFence(redis, fence, ARGV[4]!, 1);
      if (hash) {
        redis.hset(lock, 'owner', owner, 'fence', fmt(token), 'n', '1', hold, '1');
      } else {
        redis.set(lock, owner);
      }
    }
    redis.pexpire(lock, lease);
    out[i] = token;
  }
  return out;
};
