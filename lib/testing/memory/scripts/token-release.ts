import { pcall, ScriptPort } from './lua';

/** token-release.lua: compare-and-delete, then wake the waiters. */
export const tokenRelease: ScriptPort = (redis, KEYS, ARGV) => {
  // GET under pcall: a key of another type (a reentrant mutex of the same name) is not ours either.
  if (pcall(() => redis.get(KEYS[1]!)) === ARGV[1]) {
    redis.del(KEYS[1]!);
    redis.publish(ARGV[2]!, 'released');
    return 1;
  }
  return 0;
};
