import { checkMs } from './args';
import { count, ScriptPort } from './lua';

/**
 * renew.lua: renew (lease 0: check) many mutexes (strings of one hold, hashes) and token locks; 1 held,
 * 0 gone, -1 another owner's. A string's owner is its first word.
 */
export const renew: ScriptPort = (redis, KEYS, ARGV) => {
  for (let i = 1; i <= count(KEYS); i++) checkMs(ARGV[2 * i], 'lease ms', 0);
  const out: number[] = [];
  for (let i = 1; i <= count(KEYS); i++) {
    const owner = ARGV[2 * i - 1];
    const kind = redis.type(KEYS[i]!);
    let current: string | null | false = false;
    if (kind === 'hash') {
      current = redis.hget(KEYS[i]!, 'owner');
    } else if (kind === 'string') {
      current = /^\S*/.exec(redis.get(KEYS[i]!) ?? '')![0];
    }
    if (current === owner) {
      if (ARGV[2 * i] !== '0') redis.pexpire(KEYS[i]!, ARGV[2 * i]!);
      out.push(1);
    } else if (kind === 'none') {
      out.push(0);
    } else {
      out.push(-1);
    }
  }
  return out;
};
