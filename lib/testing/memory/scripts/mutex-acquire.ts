import { checkMs } from './args';
import { nextFence } from './fence';
import { fmt, isError, LuaValue, pcall, ScriptPort, tonumber } from './lua';

/** mutex-acquire.lua: acquire the reentrant mutex, or re-enter; a busy attempt records its process. */
export const mutexAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  // ARGV[5..8] are optional (left out when they hold their defaults): see mutex-acquire.lua.
  const reserve = ARGV[5] ?? '1';
  checkMs(ARGV[3], 'lease ms');
  checkMs(ARGV[4], 'fence ttl ms');
  checkMs(reserve, 'tokens to reserve');
  const lock = KEYS[1]!;
  const process = (ARGV[6] ?? '') !== '' ? ARGV[6]! : ARGV[1]!;
  let recorded = ARGV[7] === '1';
  const reenterOnly = ARGV[8] === '1';

  const busy = (pttl: number): LuaValue => {
    if (reenterOnly) return [-2];
    redis.zadd(KEYS[3]!, redis.nowUs(), process, true);
    redis.pexpire(KEYS[3]!, pttl + 2000);
    return [0, pttl];
  };

  const grant = (): LuaValue => {
    const token = nextFence(redis, KEYS[2]!, ARGV[4]!, tonumber(reserve));
    redis.hset(lock, 'owner', ARGV[1]!, 'fence', fmt(token), ARGV[2]!, '1');
    redis.pexpire(lock, ARGV[3]!);
    if (recorded) redis.zrem(KEYS[3]!, process);
    return [1, token];
  };

  // The common case first: a free key (PTTL -2) is granted without reading anything else.
  const pttl = redis.pttl(lock);
  if (pttl === -2) {
    if (reenterOnly) return [-2];
    return grant();
  }
  const owner = pcall(() => redis.hget(lock, 'owner'));
  if (isError(owner)) {
    // Not a hash: a token lock (a string with a lease) of the same name is busy; anything else is foreign.
    const kind = redis.type(lock);
    if (kind !== 'string' || pttl < 0) return [-1, kind];
    return busy(pttl);
  }
  if (owner === ARGV[1]) {
    redis.hset(lock, ARGV[2]!, '1');
    if (pttl < Number(ARGV[3])) redis.pexpire(lock, ARGV[3]!);
    return [2, tonumber(redis.hget(lock, 'fence'))];
  }
  if (owner !== null) {
    if (pttl < 0) return [-1, 'hash'];
    return busy(pttl);
  }
  // No owner field on an existing key: a lock reserved for one process for a moment, or a hash that is
  // not a lock.
  const reserved = redis.hget(lock, 'x');
  if (reserved === null || pttl < 0) return [-1, 'hash'];
  if (reserved !== '+' + process) return busy(pttl);
  redis.del(lock);
  if (reenterOnly) return [-2];
  // The reserved process was recorded as a waiter: always drop it.
  recorded = true;
  return grant();
};
