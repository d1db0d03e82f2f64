import { checkMs } from './args';
import { nextFence } from './fence';
import { isError, pcall, ScriptPort, tonumber } from './lua';

/** token-acquire.lua: SET NX PX with the owner's token, plus a fencing token. */
export const tokenAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  checkMs(ARGV[2], 'lease ms');
  checkMs(ARGV[3], 'fence ttl ms');
  checkMs(ARGV[4], 'tokens to reserve');
  const reserve = Number(ARGV[4]);
  if (redis.set(KEYS[1]!, ARGV[1]!, ARGV[2]!, true)) {
    return [1, nextFence(redis, KEYS[2]!, ARGV[3]!, reserve)];
  }
  const current = pcall(() => redis.get(KEYS[1]!));
  const pttl = redis.pttl(KEYS[1]!);
  if (isError(current)) {
    // A hash with a lease is a reentrant mutex of the same name (busy); anything else is foreign.
    const kind = redis.type(KEYS[1]!);
    if (kind !== 'hash' || pttl < 0) return [-1, kind];
    return [0, pttl];
  }
  // Our own grant, asked for again (a re-sent command): the counter still ends our reserved block.
  if (current === ARGV[1]) {
    const last = tonumber(redis.get(KEYS[2]!));
    return [1, last !== undefined ? last - reserve + 1 : nextFence(redis, KEYS[2]!, ARGV[3]!, reserve)];
  }
  if (pttl < 0) return [-1, 'string'];
  return [0, pttl];
};
