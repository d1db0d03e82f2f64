import { ScriptPort } from './lua';

/** fair-abandon.lua: a waiter that gave up leaves the queue; the new head of a free lock is woken. */
export const fairAbandon: ScriptPort = (redis, KEYS, ARGV) => {
  const [lock, queue, deadlines] = [KEYS[1]!, KEYS[2]!, KEYS[3]!];
  const dt = redis.type(deadlines);
  if (redis.type(queue) !== 'zset' || (dt !== 'hash' && dt !== 'none')) return 0;
  const head = redis.zrange(queue, 0, 0)[0]?.[0];
  if (redis.zrem(queue, ARGV[1]!) === 0) return 0;
  redis.hdel(deadlines, ARGV[1]!);
  if (head === ARGV[1] && !redis.exists(lock)) {
    // Only the new head may take the free lock: wake just that waiter.
    const next = redis.zrange(queue, 0, 0)[0]?.[0];
    if (next !== undefined) redis.publish(ARGV[2]!, '@' + next);
  }
  return 1;
};
