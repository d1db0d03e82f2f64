import { checkMs } from './args';
import { isError, pcall, ScriptPort, tonumber } from './lua';

/**
 * mutex-release.lua (the mutex and the fair lock's holder): release one hold; the last one deletes
 * the lock, reserves it for the longest waiting process when a cohort ended at its bound (and wakes
 * that process alone, by '@' .. its id), and wakes the waiters when one marked the grant (the fair
 * lock: only its queue's head, by '@' .. its entry).
 */
export const mutexRelease: ScriptPort = (redis, KEYS, ARGV) => {
  // ARGV[3..7] are optional (left out when they hold their defaults): see mutex-release.lua.
  const keepOut = ARGV[6] ?? '';
  if (keepOut !== '') checkMs(ARGV[7], 'yield ms');
  const lock = KEYS[1]!;
  // The channel is worked out only when a wake-up goes out (one node: ARGV[4]'s SPUBLISH is PUBLISH).
  const publish = (message: string): void => {
    const channel = (ARGV[3] ?? '') !== '' ? ARGV[3]! : `${lock}:ch`;
    redis.publish(channel, message);
  };

  // The lock is gone now: reserve it at a cohort's bound, and wake the waiters when one marked the
  // grant (or, for a hash without the mark, layout 1, when the waiters zset has anyone).
  const wake = (marked: boolean, unmarkable: boolean): number => {
    // The waiters zset is read only to reserve the lock, or for a hash without the mark (layout 1).
    const waiting =
      keepOut !== '' || unmarkable ? redis.zrange(KEYS[2]!, 0, 1).map(([member]) => member) : [];
    if (keepOut !== '') {
      // Lua's `waiting[1] == keep_out and waiting[2] or waiting[1]`: a nil waiting[2] falls back to waiting[1].
      const next = (waiting[0] === keepOut ? waiting[1] : undefined) ?? waiting[0];
      if (next !== undefined) {
        redis.hset(lock, 'x', '+' + next);
        redis.pexpire(lock, ARGV[7]!);
        // Reserved once: a live process records itself again if it still waits, a dead one is forgotten.
        redis.zrem(KEYS[2]!, next);
        // Only that process can take it now: a directed wake-up wakes its waiters alone.
        publish('@' + next);
        return 1;
      }
    }
    if (marked || waiting.length > 0) publish('released');
    return 1;
  };

  // One hold: the string of single-hold.lua; a hash answers WRONGTYPE and is read below.
  if (ARGV[5] !== '1') {
    const value = pcall(() => redis.get(lock));
    if (value === null) return 0;
    if (typeof value === 'string') {
      // The string starts with this owner and hold (ids have no spaces) and a token follows.
      const prefix = `${ARGV[1]!} ${ARGV[2]!} `;
      if (!value.startsWith(prefix)) return 0;
      const marked = /^\d+([\s\S]*)$/.exec(value.slice(prefix.length))?.[1];
      if (marked === undefined) return 0;
      redis.del(lock);
      return wake(marked !== '', false);
    }
  }
  // One read for every check: owner, this hold, the hold count, the waiter mark (a non-hash is not ours).
  const found = pcall(() => ['owner', ARGV[2]!, 'n', 'w'].map((f) => redis.hget(lock, f)));
  if (isError(found) || found[0] !== ARGV[1] || found[1] === null) return 0;
  const [, , nField, mark] = found;
  // The holds: `n`, or for a hash without it (the fair lock's holder) the fields besides owner and fence.
  const n = tonumber(nField ?? undefined) ?? redis.hlen(lock) - 2;
  if (n > 1) {
    redis.hdel(lock, ARGV[2]!);
    if (nField !== null) redis.hset(lock, 'n', String(n - 1));
    return 2;
  }
  redis.del(lock);
  if (ARGV[5] === '1') {
    // The fair lock: KEYS[2] is its queue; only its head may take the lock, so only the head is woken.
    const head = redis.zrange(KEYS[2]!, 0, 0)[0]?.[0];
    if (head !== undefined) publish('@' + head);
    return 1;
  }
  return wake(mark !== null, nField === null);
};
