import { checkMs } from './args';
import { nextFence } from './fence';
import { nowMs } from './holders';
import { fmt, ScriptPort, tonumber } from './lua';

/** fair-acquire.lua: FIFO across processes; each attempt keeps its entry's place, only the head may take a free lock. */
export const fairAcquire: ScriptPort = (redis, KEYS, ARGV) => {
  checkMs(ARGV[3], 'lease ms');
  checkMs(ARGV[4], 'fence ttl ms');
  checkMs(ARGV[6], 'waiter ttl ms');
  checkMs(ARGV[9], 'tokens to reserve');
  const [lock, queue, deadlines] = [KEYS[1]!, KEYS[2]!, KEYS[3]!];
  const owner = ARGV[1]!;
  const entry = ARGV[10] !== '' ? ARGV[10]! : owner;
  const wanted = ['hash', 'zset', 'hash'];
  for (let i = 1; i <= 3; i++) {
    const kind = redis.type(KEYS[i]!);
    if (kind !== 'none' && (kind !== wanted[i - 1] || redis.pttl(KEYS[i]!) < 0)) return [-1, kind, i];
  }

  const held = redis.exists(lock);
  if (held && redis.hget(lock, 'owner') === owner) {
    redis.hset(lock, ARGV[2]!, '1');
    if (redis.pttl(lock) < Number(ARGV[3])) redis.pexpire(lock, ARGV[3]!);
    return [2, tonumber(redis.hget(lock, 'fence'))];
  }
  if (ARGV[5] === '1') return [-2];

  const now = nowMs(redis);
  const ttl = Number(ARGV[6]);
  // Join at the tail, or keep the place taken by an earlier attempt.
  if (redis.zscore(queue, entry) === null) {
    const last = redis.zrange(queue, -1, -1)[0];
    redis.zadd(queue, last ? last[1] + 1 : 1, entry);
  }
  redis.hset(deadlines, entry, fmt(now + ttl));
  // Every deadline is at most now + ttl, so the queue's keys outlive all of them.
  redis.pexpire(queue, ttl);
  redis.pexpire(deadlines, ttl);

  // Drop dead waiters from the head (a dead waiter further back is dropped when it gets there).
  let head: string | undefined;
  let dropped = false;
  for (;;) {
    head = redis.zrange(queue, 0, 0)[0]?.[0];
    if (head === entry) break;
    if ((tonumber(redis.hget(deadlines, head!) ?? '0') ?? 0) > now) break;
    redis.zrem(queue, head!);
    redis.hdel(deadlines, head!);
    dropped = true;
  }

  if (held) return [0, redis.pttl(lock)];
  if (head !== entry) {
    // A free lock whose head waiter just changed: let the new head try at once.
    if (dropped) redis.publish(ARGV[7]!, '@' + head);
    return [0, -1];
  }
  redis.zrem(queue, entry);
  redis.hdel(deadlines, entry);
  const token = nextFence(redis, KEYS[4]!, ARGV[4]!, Number(ARGV[9]));
  redis.hset(lock, 'owner', owner, 'fence', fmt(token), ARGV[2]!, '1');
  redis.pexpire(lock, ARGV[3]!);
  return [1, token];
};
