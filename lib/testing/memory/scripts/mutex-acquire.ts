import { checkMs } from './args';
import { nextFence } from './fence';
import { fmt, isError, LuaValue, pcall, ScriptPort, tonumber } from './lua';
import { addSecondHold, matchSingleHold } from './single-hold';

/** mutex-acquire.lua: acquire the reentrant mutex, or re-enter; a busy attempt records its process. */
export const mutexAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  // ARGV[5..8] are optional (left out when they hold their defaults): see mutex-acquire.lua.
  const lock = KEYS[1]!;
  const process = (ARGV[6] ?? '') !== '' ? ARGV[6]! : ARGV[1]!;
  let recorded = ARGV[7] === '1';
  const reenterOnly = ARGV[8] === '1';

  // `mark`: marks the grant as waited for (undefined: already marked, or not markable).
  const busy = (pttl: number, mark?: () => void): LuaValue => {
    if (reenterOnly) return [-2];
    redis.zadd(KEYS[3]!, redis.nowUs(), process, true);
    redis.pexpire(KEYS[3]!, pttl + 2000);
    mark?.();
    return [0, pttl];
  };

  const grant = (): LuaValue => {
    checkMs(ARGV[3], 'lease ms');
    checkMs(ARGV[4], 'fence ttl ms');
    const token = nextFence(redis, KEYS[2]!, ARGV[4]!, checkMs(ARGV[5] ?? '1', 'tokens to reserve'));
    redis.set(lock, `${ARGV[1]!} ${ARGV[2]!} ${fmt(token)}`, ARGV[3]!);
    if (recorded) redis.zrem(KEYS[3]!, process);
    return [1, token];
  };

  // The common case first: a free key (PTTL -2) is granted without reading anything else.
  const pttl = redis.pttl(lock);
  if (pttl === -2) {
    if (reenterOnly) return [-2];
    return grant();
  }
  // One read for the rest: GET (a string: one hold, or a token lock), else HMGET.
  const value = pcall(() => redis.get(lock));
  if (typeof value === 'string') {
    if (pttl < 0) return [-1, 'string'];
    const single = matchSingleHold(value);
    // No spaces: a token lock of the same name, busy (its release always publishes).
    if (!single) return busy(pttl);
    const [owner, hold, token, marked] = single;
    if (owner !== ARGV[1]) {
      return busy(pttl, marked === '' ? () => redis.set(lock, value + ' w', redis.pttl(lock)) : undefined);
    }
    checkMs(ARGV[3], 'lease ms');
    // The same hold: this very call, sent again (a reply lost with the connection).
    if (hold !== ARGV[2]) {
      addSecondHold(redis, lock, single, { pttl, leaseMs: ARGV[3]!, hold: ARGV[2]! });
    } else if (pttl < Number(ARGV[3])) {
      redis.pexpire(lock, ARGV[3]!);
    }
    return [2, tonumber(token)];
  }
  const found = pcall(() => ['owner', 'n', 'w', 'x', ARGV[2]!, 'fence'].map((f) => redis.hget(lock, f)));
  if (isError(found)) return [-1, redis.type(lock)];
  const [owner, nField, mark, reserved, hold, fence] = found;
  const n = tonumber(nField ?? undefined);
  if (owner === ARGV[1]) {
    checkMs(ARGV[3], 'lease ms');
    // A hold already there is this very re-entry, sent again (a reply lost with the connection).
    if (hold === null) redis.hset(lock, ARGV[2]!, '1', 'n', String((n ?? 1) + 1));
    if (pttl < Number(ARGV[3])) redis.pexpire(lock, ARGV[3]!);
    return [2, tonumber(fence)];
  }
  if (owner !== null) {
    if (pttl < 0) return [-1, 'hash'];
    return busy(pttl, n !== undefined && mark === null ? () => redis.hset(lock, 'w', '1') : undefined);
  }
  // No owner field on an existing key: a lock reserved for one process for a moment, or a hash that is
  // not a lock.
  if (reserved === null || pttl < 0) return [-1, 'hash'];
  if (reserved !== '+' + process) return busy(pttl);
  redis.del(lock);
  if (reenterOnly) return [-2];
  // The reserved process was recorded as a waiter: always drop it.
  recorded = true;
  return grant();
};
