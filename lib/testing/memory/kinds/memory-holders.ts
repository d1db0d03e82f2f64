import type { RenewRequest } from '../../../core/kinds/lock-kind';
import type { AttemptReply } from '../../../core/kinds/reply';
import type { MemoryStore } from '../memory-store';

/**
 * holders.lua for the shared-holder kinds (read-write lock, semaphore): the lock hash keeps each
 * owner's open holds (`o:<owner>` = '<m>:<hold id> ...', m = r, w or p) plus kind fields (writer,
 * ww, wwx); the aux sorted set each holder's own lease deadline in server ms.
 */
export class MemoryHolders {
  constructor(
    private readonly store: MemoryStore,
    readonly hash: string,
    readonly zset: string,
  ) {}

  /** holders.lua's foreign(): [-1, type, i] when key i holds data that is not this lock (other type, or no TTL). */
  foreign(): AttemptReply | undefined {
    const ht = this.store.type(this.hash);
    if (ht !== 'none' && (ht !== 'hash' || this.store.pttl(this.hash) < 0)) return [-1, ht, 1];
    const zt = this.store.type(this.zset);
    if (zt !== 'none' && (zt !== 'zset' || this.store.pttl(this.zset) < 0)) return [-1, zt, 2];
    return undefined;
  }

  /** Drops every holder whose lease ran out; returns how many went. */
  prune(now: number): number {
    const expired = this.store.zrange(this.zset).filter(([, deadline]) => deadline <= now);
    for (const [owner] of expired) {
      this.store.hdel(this.hash, `o:${owner}`);
      this.dropWeight(owner);
      if (this.field('writer') === owner) this.store.hdel(this.hash, 'writer');
    }
    this.store.zrem(this.zset, ...expired.map(([owner]) => owner));
    return expired.length;
  }

  /** Semaphore permits in use: one per holder plus `extra` (Σ permits − 1 of multi-permit holders). */
  permitsUsed(): number {
    return this.store.zrange(this.zset).length + (Number(this.field('extra') ?? '0') || 0);
  }

  /** Records that `owner` holds `permits` > 1 permits. */
  addWeight(owner: string, permits: number): void {
    if (permits <= 1) return;
    const extra = (Number(this.field('extra') ?? '0') || 0) + permits - 1;
    this.store.hset(this.hash, { [`n:${owner}`]: String(permits), extra: String(extra) });
  }

  /** Takes back the extra permits of `owner` (when it held more than one). */
  dropWeight(owner: string): void {
    const permits = Number(this.field(`n:${owner}`) ?? '1') || 1;
    if (permits <= 1) return;
    this.store.hdel(this.hash, `n:${owner}`);
    const extra = (Number(this.field('extra') ?? '0') || 0) - (permits - 1);
    this.store.hset(this.hash, { extra: String(extra) });
  }

  /** The latest lease deadline among holders (0 when there is none). */
  lastDeadline(): number {
    return this.store.zrange(this.zset).at(-1)?.[1] ?? 0;
  }

  /** Both keys expire with the last holder's lease or the writer marker; deleted when neither is left. */
  syncTtl(now: number): void {
    const until = Math.max(this.lastDeadline(), Number(this.field('wwx') ?? '0') || 0);
    if (until <= now) {
      this.store.del(this.hash, this.zset);
      return;
    }
    this.store.pexpire(this.hash, until - now);
    this.store.pexpire(this.zset, until - now);
  }

  field(name: string): string | undefined {
    return this.store.hash(this.hash)?.get(name);
  }

  holds(owner: string): string | undefined {
    return this.field(`o:${owner}`);
  }

  /** Adds '<m>:<hold id>' to the owner's holds (a retried add changes nothing). */
  addHold(owner: string, entry: string): void {
    const list = this.holds(owner);
    if (list === undefined) this.store.hset(this.hash, { [`o:${owner}`]: entry });
    else if (!list.split(' ').includes(entry))
      this.store.hset(this.hash, { [`o:${owner}`]: `${list} ${entry}` });
  }

  /** Moves the owner's lease deadline to at least `deadline` (a re-entry never shortens it). */
  extendTo(owner: string, deadline: number): void {
    if ((this.store.zset(this.zset)?.get(owner) ?? 0) < deadline) this.store.zadd(this.zset, deadline, owner);
  }

  /** holders-renew.lua for one request: 1 renewed, or 0 gone (never -1: each holder has its own lease). */
  renew(r: RenewRequest, now: number): 1 | 0 {
    if (this.store.type(this.zset) !== 'zset' || this.foreign()) return 0;
    let result: 1 | 0 = 0;
    if ((this.store.zset(this.zset)?.get(r.owner) ?? 0) > now) {
      this.store.zadd(this.zset, now + r.leaseMs, r.owner);
      result = 1;
    } else {
      this.prune(now);
    }
    this.syncTtl(now);
    return result;
  }

  /**
   * read-write-abandon.lua (also the semaphore's): drops this owner's writer-waiting marker or
   * permit reservation and wakes the waiters it held back. 1 dropped, 0 this owner had none.
   */
  dropReservation(owner: string, channel: string, now: number): 0 | 1 {
    if (this.foreign() || this.field('ww') !== owner) return 0;
    this.store.hdel(this.hash, 'ww', 'wwx', 'wwn');
    this.syncTtl(now);
    this.store.publish(channel, 'released');
    return 1;
  }
}

/**
 * Removes the hold `holdId` (any mode) from an owner's list. Returns the rest ('' when empty) and
 * the hold's mode, or undefined when the hold is not there (a retried release changes nothing).
 */
export function removeHold(list: string, holdId: string): { rest: string; mode: string } | undefined {
  const entries = list.split(' ').filter(Boolean);
  const at = entries.findIndex((e) => e.length > 2 && e[1] === ':' && e.slice(2) === holdId);
  if (at < 0) return undefined;
  const mode = entries[at]![0]!;
  entries.splice(at, 1);
  return { rest: entries.join(' '), mode };
}
