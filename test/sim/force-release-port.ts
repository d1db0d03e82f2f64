import type { MemoryStore } from '../../lib/testing/memory/memory-store';
import { nextFence } from '../../lib/testing/memory/scripts/fence';
import { fmt, tonumber, type LuaValue } from '../../lib/testing/memory/scripts/lua';
import { matchSingleHold } from '../../lib/testing/memory/scripts/single-hold';

/**
 * The scripts a force release runs, ported line by line for the simulated servers (the in-memory
 * testing backend has no inspection, so its ports leave them out): force-release.lua, and the two it
 * needs beside it, registry-read.lua (who holds what, read first) and audit-append.lua.
 */

/** force-release.lua: evict every holder of one lock kind, advance the fence, wake, tell each engine. */
export function forceRelease(redis: MemoryStore, KEYS: readonly string[], ARGV: string[]): LuaValue {
  const [lock, aux] = [KEYS[1]!, KEYS[2]!];
  const tag = ARGV[1]!;
  const evicted: LuaValue[] = [];
  let label =
    ({ rw: 'read-write', fair: 'fair', sem: 'semaphore' } as Record<string, string>)[tag] ?? 'mutex';
  const add = (owner: string, token: string | null, holds: number, mode?: string, permits?: number) => {
    evicted.push(owner, token ?? '0', holds, mode ?? '', permits ?? 1);
  };

  const kind = redis.type(lock);
  if (kind === 'none') return [0];
  if (redis.pttl(lock) < 0) return [-1, kind];
  if (tag === 'm' || tag === 'fair') {
    // A string is a mutex of one hold or a token lock (single-hold.lua).
    const value = kind === 'string' && tag === 'm' ? redis.get(lock) : null;
    const single = matchSingleHold(value ?? '');
    if (value !== null && !single && ARGV[5] !== 'mutex') {
      add(value, '0', 1);
      label = 'token';
    } else if (single && ARGV[5] !== 'token') {
      add(single[0], single[2], 1);
    } else if (kind === 'hash' && (tag === 'fair' || ARGV[5] !== 'token')) {
      const owner = redis.hget(lock, 'owner');
      // No owner: a lock reserved for a moment for one waiting process, held by nobody.
      if (owner === null) return [0];
      // The holds: `n` (mutex-acquire.lua), or the fields besides owner and fence (the fair lock's holder).
      const holds = tonumber(redis.hget(lock, 'n')) ?? redis.hlen(lock) - 2;
      add(owner, redis.hget(lock, 'fence') ?? '0', holds);
    } else if (kind === 'hash' || kind === 'string') {
      return [0];
    } else {
      return [-1, kind];
    }
    redis.del(lock);
  } else {
    if (kind !== 'hash') return [-1, kind];
    const writer = redis.hget(lock, 'writer');
    const holders = redis.zrange(aux, 0, -1).map(([member]) => member);
    for (const owner of holders) {
      const list = redis.hget(lock, `o:${owner}`) ?? '';
      const holds = (list.match(/\S+/g) ?? []).length;
      const mode = tag === 'rw' ? (owner === writer ? 'write' : 'read') : '';
      add(owner, '0', holds, mode, tonumber(redis.hget(lock, `n:${owner}`) ?? '1'));
    }
    if (holders.length === 0) return [0];
    redis.del(lock, aux);
  }

  const fence = nextFence(redis, KEYS[3]!, ARGV[4]!, 1);
  if (tag === 'fair') {
    // Only the queue's head may take a fair lock: wake it (the others keep their places).
    const head = redis.zrange(aux, 0, 0)[0]?.[0];
    if (head !== undefined) redis.publish(ARGV[2]!, `@${head}`);
  } else {
    redis.publish(ARGV[2]!, 'released');
  }
  // Notices are plain PUBLISH (never sharded): each engine hears them on its own notice channel.
  for (let i = 0; i < evicted.length; i += 5) {
    const owner = evicted[i] as string;
    redis.publish(
      ARGV[6]! + /^[^.]*/.exec(owner)![0],
      JSON.stringify({
        type: 'force-released',
        lock,
        owner,
        key: ARGV[7],
        reason: ARGV[8],
        by: ARGV[9],
      }),
    );
  }
  return [1, fmt(fence), label, ...evicted];
}

/** registry-read.lua: every live engine record of one key prefix. */
export function registryRead(redis: MemoryStore, KEYS: readonly string[], ARGV: string[]): LuaValue {
  const out: LuaValue[] = [];
  if (redis.type(KEYS[1]!) !== 'zset') return out;
  for (const [id] of redis.zrange(KEYS[1]!, 0, -1)) {
    const record = ARGV[1]! + id;
    if (redis.type(record) === 'hash') out.push(id, redis.hgetall(record).flat());
  }
  return out;
}

/**
 * audit-append.lua, on a list: the MemoryStore has no streams, and a force release only needs the
 * entry id back (the simulation never reads the audit). One entry per call, the key's TTL renewed.
 */
export function auditAppend(redis: MemoryStore, KEYS: readonly string[], ARGV: string[]): LuaValue {
  redis.rpush(KEYS[1]!, JSON.stringify(ARGV.slice(3)));
  redis.pexpire(KEYS[1]!, ARGV[2]!);
  return `${Math.floor(redis.nowMs())}-${redis.lrange(KEYS[1]!).length}`;
}
