import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import { busy, granted, MemoryCommands, notHeld } from '../memory-commands';
import { MemoryHolders, removeHold } from './memory-holders';

/**
 * The counting semaphore in memory: sem-acquire.lua / sem-release.lua / holders-renew.lua. One
 * entry per permit holder with its own lease; a permit is reentrant for its owner; expired permits
 * come back on every access.
 */
export class MemorySemaphore implements LockKind {
  readonly tag = 'sem' as const;
  readonly exclusive = false;
  readonly reentrant = true;

  constructor(private readonly commands: MemoryCommands) {}

  attempt(r: AttemptRequest): Promise<AttemptResult> {
    if ((r.options.permits ?? 1) > 1) {
      // Not modelled in memory yet (weights and reservations live in semaphore-acquire.lua).
      return Promise.reject(new TypeError('permits > 1 is not supported by the in-memory testing backend'));
    }
    const { store } = this.commands;
    return this.commands.run(
      () => {
        const holders = this.holders(r);
        const now = this.commands.nowMs();
        if (holders.prune(now) > 0) store.publish(r.names.channel);
        if (holders.holds(r.owner) !== undefined) {
          holders.addHold(r.owner, `p:${r.holdId}`);
          holders.extendTo(r.owner, now + r.leaseMs);
          holders.syncTtl(now);
          return granted(0, true);
        }
        if (r.reenter) return notHeld;
        const permits = store.zrange(holders.zset);
        if (permits.length >= (r.options.limit ?? 1)) return busy(permits[0]![1] - now);
        store.hset(holders.hash, { [`o:${r.owner}`]: `p:${r.holdId}` });
        store.zadd(holders.zset, now + r.leaseMs, r.owner);
        const token = this.commands.nextFence(r.names.fence);
        holders.syncTtl(now);
        return granted(token);
      },
      'sem-acquire',
      r.key,
    );
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    const { store } = this.commands;
    return this.commands.run(
      () => {
        const holders = this.holders(h);
        const now = this.commands.nowMs();
        let wake = holders.prune(now) > 0;
        let result: ReleaseResult = 'not-held';
        const list = holders.holds(h.owner);
        const removed = list === undefined ? undefined : removeHold(list, h.holdId);
        if (removed?.rest === '') {
          store.hdel(holders.hash, `o:${h.owner}`);
          store.zrem(holders.zset, h.owner);
          wake = true;
          result = 'released';
        } else if (removed) {
          store.hset(holders.hash, { [`o:${h.owner}`]: removed.rest });
          result = 'still-held';
        }
        holders.syncTtl(now);
        if (wake) store.publish(h.names.channel);
        return result;
      },
      'sem-release',
      h.key,
    );
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return this.commands.run(() => {
      const now = this.commands.nowMs();
      return requests.map((r) => this.holders(r).renew(r, now));
    }, 'holders-renew');
  }

  private holders(r: HoldRef): MemoryHolders {
    return new MemoryHolders(this.commands.store, r.names.lock, r.names.aux);
  }
}
