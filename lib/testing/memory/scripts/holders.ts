/*
 * holders.lua, the shared prelude of the shared-holder kinds (read-write lock, counting semaphore):
 * the lock hash { o:<owner> = '<m>:<hold id> ...', writer, ww, wwx, wwn, n:<owner>, extra } and the
 * aux zset { <owner> = lease deadline in server ms }. See the Lua file for the layout.
 */
import type { MemoryStore } from '../memory-store';
import { fmt, LuaValue, tonumber } from './lua';

/** now_ms(): the server clock in whole ms (TIME). */
export function nowMs(redis: MemoryStore): number {
  return Math.floor(redis.nowUs() / 1000);
}

/** {-1, type, i} when key i holds data that is not this lock (other type, or no TTL); undefined when fine. */
export function foreign(redis: MemoryStore, hash: string, zset: string): LuaValue[] | undefined {
  const ht = redis.type(hash);
  if (ht !== 'none' && (ht !== 'hash' || redis.pttl(hash) < 0)) return [-1, ht, 1];
  const zt = redis.type(zset);
  if (zt !== 'none' && (zt !== 'zset' || redis.pttl(zset) < 0)) return [-1, zt, 2];
  return undefined;
}

/** Semaphore permits in use: ZCARD + extra. */
export function permitsUsed(redis: MemoryStore, hash: string, zset: string): number {
  return redis.zcard(zset) + (tonumber(redis.hget(hash, 'extra') ?? '0') ?? 0);
}

/** Takes back the extra permits of `owner` (when it held more than one). */
export function dropWeight(redis: MemoryStore, hash: string, owner: string): void {
  const n = tonumber(redis.hget(hash, 'n:' + owner) ?? '1') ?? 1;
  if (n > 1) {
    redis.hdel(hash, 'n:' + owner);
    redis.hincrby(hash, 'extra', 1 - n);
  }
}

/** Drops every holder whose lease ran out by the server clock; returns how many went. */
export function prune(redis: MemoryStore, hash: string, zset: string, now: number): number {
  const expired = redis.zrangebyscore(zset, now);
  for (const owner of expired) {
    redis.hdel(hash, 'o:' + owner);
    dropWeight(redis, hash, owner);
    if (redis.hget(hash, 'writer') === owner) redis.hdel(hash, 'writer');
  }
  if (expired.length > 0) redis.zremrangebyscore(zset, now);
  return expired.length;
}

/** The latest lease deadline among holders (0 when there is none). */
export function lastDeadline(redis: MemoryStore, zset: string): number {
  const last = redis.zrange(zset, -1, -1)[0];
  return last ? last[1] : 0;
}

/** Both keys expire with the last holder's lease or the writer marker; deleted when neither is left. */
export function syncTtl(redis: MemoryStore, hash: string, zset: string, now: number): void {
  let untilMs = lastDeadline(redis, zset);
  const marker = tonumber(redis.hget(hash, 'wwx') ?? '0') ?? 0;
  if (marker > untilMs) untilMs = marker;
  if (untilMs <= now) {
    redis.del(hash, zset);
    return;
  }
  redis.pexpire(hash, fmt(untilMs - now));
  redis.pexpire(zset, fmt(untilMs - now));
}

/** Adds `entry` ('<m>:<hold id>') to the owner's holds (a retried add changes nothing). */
export function holdsAdd(redis: MemoryStore, hash: string, owner: string, entry: string): void {
  const list = redis.hget(hash, 'o:' + owner);
  if (list === null) {
    redis.hset(hash, 'o:' + owner, entry);
  } else if (!(' ' + list + ' ').includes(' ' + entry + ' ')) {
    redis.hset(hash, 'o:' + owner, list + ' ' + entry);
  }
}

/**
 * Removes the hold `hold` (any mode) from `list`: the remaining list ('' when empty) and the hold's
 * mode, or false when the hold is not there. (Lua's 1-based string positions become 0-based here.)
 */
export function holdsRemove(list: string, hold: string): [rest: string, mode: string] | false {
  const padded = ' ' + list + ' ';
  const pattern = ':' + hold + ' ';
  const s = padded.indexOf(pattern);
  if (s < 0 || padded[s - 2] !== ' ') return false;
  const mode = padded[s - 1]!;
  const rest = padded.slice(0, s - 2) + padded.slice(s + pattern.length - 1);
  return [rest.replace(/^\s*(.*?)\s*$/s, '$1'), mode];
}

/** Moves the owner's lease deadline to at least `deadline` (a re-entry never shortens it). */
export function extendTo(redis: MemoryStore, zset: string, owner: string, deadline: number): void {
  const score = redis.zscore(zset, owner) ?? 0;
  if (score < deadline) redis.zadd(zset, deadline, owner);
}

/** The start of a per-hold release (release_start): what the release then works on. */
export interface HoldRelease {
  readonly now: number;
  /** Pruning expired holders freed someone: waiters are told. */
  wake: boolean;
  /** The owner's open holds without this one; false when it held no such hold. */
  readonly rest: string | false;
  /** The mode of the hold removed. */
  readonly mode?: string;
}

/**
 * release_start(): the start of every per-hold release (KEYS lock hash, aux zset; ARGV owner, hold id,
 * channel, publish command); undefined when foreign data sits at the lock.
 */
export function releaseStart(
  redis: MemoryStore,
  KEYS: readonly string[],
  ARGV: readonly string[],
): HoldRelease | undefined {
  const [hash, zset] = [KEYS[1]!, KEYS[2]!];
  if (foreign(redis, hash, zset)) return undefined;
  const now = nowMs(redis);
  const wake = prune(redis, hash, zset, now) > 0;
  const list = redis.hget(hash, 'o:' + ARGV[1]!);
  const removed = list !== null ? holdsRemove(list, ARGV[2]!) : false;
  return { now, wake, rest: removed && removed[0], mode: removed ? removed[1] : undefined };
}

/** release_end(): the lease follows the holders left, waiters hear it when `wake`; returns `result`. */
export function releaseEnd(
  redis: MemoryStore,
  KEYS: readonly string[],
  ARGV: readonly string[],
  end: { readonly release: HoldRelease; readonly result: number },
): number {
  syncTtl(redis, KEYS[1]!, KEYS[2]!, end.release.now);
  if (end.release.wake) redis.publish(ARGV[3]!, 'released');
  return end.result;
}
