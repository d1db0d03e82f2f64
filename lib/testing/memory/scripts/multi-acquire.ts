import { checkMs } from './args';
import { nextFence } from './fence';
import { count, fmt, LuaValue, ScriptPort, tonumber } from './lua';
import { addSecondHold, matchSingleHold } from './single-hold';

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

  // A busy mutex records this caller as a waiter and marks the grant. `mark`: true for a hash, the
  // string of a single hold not marked yet, undefined when there is nothing to mark.
  const busy = (i: number, pttl: number, mutex: boolean, mark?: true | string): LuaValue => {
    if (mutex) {
      const lock = KEYS[3 * i - 2]!;
      redis.zadd(KEYS[3 * i]!, redis.nowUs(), owner, true);
      redis.pexpire(KEYS[3 * i]!, pttl + 2000);
      if (typeof mark === 'string') {
        redis.set(lock, mark + ' w', redis.pttl(lock));
      } else if (mark && redis.hexists(lock, 'n')) {
        // Only a hash that counts its holds takes the mark `w` (see mutex-acquire.lua on layout 1).
        redis.hset(lock, 'w', '1');
      }
    }
    return [0, pttl, i];
  };

  // The mutexes of one hold this owner holds already, with what the string had left of its lease.
  const single = new Map<number, [hold: [string, string, string, string], pttl: number]>();
  for (let i = 1; i <= n; i++) {
    const lock = KEYS[3 * i - 2]!;
    const kind = redis.type(lock);
    if (kind !== 'none') {
      const pttl = redis.pttl(lock);
      if ((kind !== 'hash' && kind !== 'string') || pttl < 0) return [-1, kind, i];
      let holder: string | null;
      let value: string | undefined;
      let one: [string, string, string, string] | undefined;
      if (kind === 'hash') {
        holder = redis.hget(lock, 'owner');
      } else {
        value = redis.get(lock)!;
        one = matchSingleHold(value);
        if (one?.[0] === owner) single.set(i, [one, pttl]);
        // Not a mutex of one hold: a token lock, its owner the whole string.
        holder = one?.[0] ?? value;
      }
      const mutex = kind === 'hash' || one !== undefined;
      if (holder === null) {
        const reserved = kind === 'hash' && redis.hget(lock, 'x');
        // A hash without an owner is not a lock (Lua: only nil and false are false, '' is true).
        if (reserved === false || reserved === null) return [-1, kind, i];
        if (reserved !== '+' + owner) return busy(i, pttl, true);
        reservedForUs.add(i);
      } else if (holder !== owner || mutex !== hash) {
        return busy(i, pttl, mutex, kind === 'hash' ? true : one?.[3] === '' ? value : undefined);
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
    const once = single.get(i);
    if (once) {
      const [one, pttl] = once;
      token = tonumber(one[2]);
      // One more hold (the same hold: this call, sent again): the string becomes the hash.
      if (one[1] !== hold) {
        addSecondHold(redis, lock, one, { pttl, leaseMs: lease, hold });
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
