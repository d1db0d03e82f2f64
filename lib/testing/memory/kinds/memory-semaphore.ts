import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import { ATTEMPT_MARGIN_MS } from '../../../core/waiting/with-deadline';
import { busy, granted, MemoryCommands, notHeld } from '../memory-commands';
import { MemoryHolders, removeHold } from './memory-holders';

/**
 * The counting semaphore in memory: semaphore-acquire.lua / semaphore-release.lua / holders-renew.lua.
 * One entry per holder with its own lease (a holder of several permits is weighted); a holder is
 * reentrant for its owner; expired permits come back on every access; a refused waiter reserves.
 */
export class MemorySemaphore implements LockKind {
  readonly tag = 'sem' as const;
  readonly exclusive = false;
  readonly reentrant = true;

  constructor(
    private readonly commands: MemoryCommands,
    /** How long a permit reservation lives without a refresh (see waiterTtlMs). */
    private readonly reservationTtlMs: number,
  ) {}

  /** A waiter that gave up drops its permit reservation (semaphore-acquire.lua describes it). */
  async abandon(r: AttemptRequest): Promise<void> {
    const { store } = this.commands;
    await this.commands
      .run(
        () => {
          const holders = this.holders(r);
          if (holders.field('ww') !== r.owner) return;
          store.hdel(holders.hash, 'ww', 'wwx', 'wwn');
          holders.syncTtl(this.commands.nowMs());
          store.publish(r.names.channel);
        },
        'sem-abandon',
        r.key,
      )
      .catch(() => undefined); // the reservation expires by itself
  }

  attempt(r: AttemptRequest): Promise<AttemptResult> {
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
        const want = r.options.permits ?? 1;
        let reserved = holders.field('ww');
        if (reserved !== undefined && (Number(holders.field('wwx') ?? '0') || 0) <= now) {
          store.hdel(holders.hash, 'ww', 'wwx', 'wwn');
          reserved = undefined;
        }
        const reservedN = Number(holders.field('wwn') ?? '0') || 0;
        let room = (r.options.limit ?? 1) - holders.permitsUsed();
        if (reserved !== undefined && reserved !== r.owner) room -= reservedN;
        if (want > room) {
          const reserve = r.timeoutMs === undefined || r.timeoutMs - ATTEMPT_MARGIN_MS > 1;
          if (reserve && (reserved === undefined || reserved === r.owner || want > reservedN)) {
            store.hset(holders.hash, {
              ww: r.owner,
              wwn: String(want),
              wwx: String(now + this.reservationTtlMs),
            });
          }
          holders.syncTtl(now);
          const first = store.zrange(holders.zset)[0];
          return busy(first ? first[1] - now : -1);
        }
        if (reserved === r.owner) store.hdel(holders.hash, 'ww', 'wwx', 'wwn');
        store.hset(holders.hash, { [`o:${r.owner}`]: `p:${r.holdId}` });
        holders.addWeight(r.owner, want);
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
          holders.dropWeight(h.owner);
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
