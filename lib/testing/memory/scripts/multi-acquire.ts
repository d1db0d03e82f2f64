import { checkMs } from './args';
import { nextFence } from './fence';
import { count, fmt, LuaValue, matchSingleHold, ScriptPort, tonumber } from './lua';

/**
 * multi-acquire.lua: several mutexes or token locks at once, all or none, each written as its
 * single-key script would; a busy mutex records this caller as a waiter and marks the grant.
 */
export const multiAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  checkMs(ARGV[3], 'lease ms');
  checkMs(ARGV[4], 'fence ttl ms');
  const n = count(KEYS) / 3;
  const [owner, hold, lease, hash] = [ARGV[1]!, ARGV[2]!, ARGV[3]!, ARGV[5] === '1'];
  const ours = new Set<number>();
  const reservedForUs = new Set<number>();

  // `mark`: marks the grant as waited for (undefined: already marked, or not markable).
  const busy = (i: number, pttl: number, mutex: boolean, mark?: () => void): LuaValue => {
    if (mutex) {
      // Record a waiter on a mutex, so its release publishes a wake-up (mutex-release.lua).
      redis.zadd(KEYS[3 * i]!, redis.nowUs(), owner, true);
      redis.pexpire(KEYS[3 * i]!, pttl + 2000);
      mark?.();
    }
    return [0, pttl, i];
  };

  // The mutexes of one hold this owner holds already (index -> [hold id, token, marked]).
  const single = new Map<number, [string, string, string]>();
  for (let i = 1; i <= n; i++) {
    const lock = KEYS[3 * i - 2]!;
    const kind = redis.type(lock);
    if (kind !== 'none') {
      const pttl = redis.pttl(lock);
      if ((kind !== 'hash' && kind !== 'string') || pttl < 0) return [-1, kind, i];
      let holder: string | null;
      let mutex: boolean;
      let mark: (() => void) | undefined;
      if (kind === 'hash') {
        [holder, mutex] = [redis.hget(lock, 'owner'), true];
        // A hash that counts its holds takes the mark `w` (see mutex-acquire.lua on layout 1).
        mark = () => {
          if (redis.hexists(lock, 'n')) redis.hset(lock, 'w', '1');
        };
      } else {
        const value = redis.get(lock)!;
        const hold1 = matchSingleHold(value);
        [holder, mutex] = [hold1?.[0] ?? value, hold1 !== undefined];
        if (hold1 && hold1[0] === owner) single.set(i, [hold1[1], hold1[2], hold1[3]]);
        if (hold1 && hold1[3] === '') mark = () => redis.set(lock, value + ' w', redis.pttl(lock));
      }
      if (holder === null) {
        const reserved = kind === 'hash' && redis.hget(lock, 'x');
        // A hash without an owner is not a lock (Lua: only nil and false are false, '' is true).
        if (reserved === false || reserved === null) return [-1, kind, i];
        if (reserved !== '+' + owner) return busy(i, pttl, true);
        reservedForUs.add(i);
      } else if (holder !== owner || mutex !== hash) {
        return busy(i, pttl, mutex, mark);
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
    const one = single.get(i);
    if (one) {
      const [h, t, m] = one;
      token = tonumber(t);
      // One more hold (the same hold: this call, sent again): the string becomes the hash.
      if (h !== hold) {
        const pttl = redis.pttl(lock);
        redis.del(lock);
        redis.hset(lock, 'owner', owner, 'fence', t, 'n', '2', h, '1', hold, '1');
        if (m !== '') redis.hset(lock, 'w', '1');
        redis.pexpire(lock, Math.max(pttl, Number(lease)));
      } else {
        redis.pexpire(lock, lease);
      }
    } else if (ours.has(i)) {
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
      redis.pexpire(lock, lease);
    } else {
      token = nextFence(redis, fence, ARGV[4]!, 1);
      redis.set(lock, hash ? `${owner} ${hold} ${fmt(token)}` : owner, lease);
    }
    out[i] = token;
  }
  return out;
};
