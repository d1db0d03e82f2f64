import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import { AttemptReply, decodeAttemptReply } from '../../../core/kinds/reply';
import { ATTEMPT_MARGIN_MS } from '../../../core/waiting/with-deadline';
import { decodeReleaseCode, decodeRenewCode, MemoryCommands } from '../memory-commands';
import { MemoryHolders, removeHold } from './memory-holders';

/**
 * The counting semaphore in memory: semaphore-acquire.lua / semaphore-release.lua /
 * read-write-abandon.lua / holders-renew.lua. One entry per holder with its own lease (a holder of
 * several permits is weighted); a holder is reentrant for its owner; expired permits come back on
 * every access; a refused waiter reserves.
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

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    // As the Redis kind: only a caller with time left to wait reserves permits.
    const willWait = r.timeoutMs === undefined || r.timeoutMs - ATTEMPT_MARGIN_MS > 1;
    const reservationTtlMs = willWait ? this.reservationTtlMs : 0;
    const reply = await this.commands.run(
      () => this.acquire(r, reservationTtlMs),
      'semaphore-acquire',
      r.key,
    );
    return decodeAttemptReply(reply, r.key, [r.names.lock, r.names.aux]);
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const code = await this.commands.run(() => this.releaseHold(h), 'semaphore-release', h.key);
    return decodeReleaseCode(code);
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    const codes = await this.commands.run(() => {
      const now = this.commands.nowMs();
      return requests.map((r) => this.holders(r).renew(r, now));
    }, 'holders-renew');
    return codes.map(decodeRenewCode);
  }

  /** A waiter that gave up drops its permit reservation (read-write-abandon.lua, as on Redis). */
  async abandon(r: AttemptRequest): Promise<void> {
    await this.commands
      .run(
        () => this.holders(r).dropReservation(r.owner, r.names.channel, this.commands.nowMs()),
        'read-write-abandon',
        r.key,
      )
      .catch(() => undefined); // the reservation expires by itself
  }

  /** semaphore-acquire.lua. */
  private acquire(r: AttemptRequest, reservationTtlMs: number): AttemptReply {
    const { store } = this.commands;
    const holders = this.holders(r);
    const bad = holders.foreign();
    if (bad) return bad;
    const now = this.commands.nowMs();
    // Expired permits are free again: wake the other waiters to take them.
    if (holders.prune(now) > 0) store.publish(r.names.channel, 'released');
    if (holders.holds(r.owner) !== undefined) {
      holders.addHold(r.owner, `p:${r.holdId}`);
      holders.extendTo(r.owner, now + r.leaseMs);
      holders.syncTtl(now);
      return [2, 0];
    }
    if (r.reenter) return [-2];
    const want = r.options.permits ?? 1;
    let reserved = holders.field('ww');
    const reservedN = Number(holders.field('wwn') ?? '0') || 0;
    if (reserved !== undefined && (Number(holders.field('wwx') ?? '0') || 0) <= now) {
      store.hdel(holders.hash, 'ww', 'wwx', 'wwn');
      reserved = undefined;
    }
    let room = (r.options.limit ?? 1) - holders.permitsUsed();
    if (reserved !== undefined && reserved !== r.owner) room -= reservedN;
    if (want > room) {
      if (reservationTtlMs > 0 && (reserved === undefined || reserved === r.owner || want > reservedN)) {
        store.hset(holders.hash, {
          ww: r.owner,
          wwn: String(want),
          wwx: String(now + reservationTtlMs),
        });
      }
      holders.syncTtl(now);
      const first = store.zrange(holders.zset)[0];
      return first ? [0, first[1] - now] : [0, -1];
    }
    if (reserved === r.owner) store.hdel(holders.hash, 'ww', 'wwx', 'wwn');
    store.hset(holders.hash, { [`o:${r.owner}`]: `p:${r.holdId}` });
    holders.addWeight(r.owner, want);
    store.zadd(holders.zset, now + r.leaseMs, r.owner);
    const token = this.commands.nextFence(r.names.fence);
    holders.syncTtl(now);
    return [1, token];
  }

  /** semaphore-release.lua. */
  private releaseHold(h: HoldRef): 0 | 1 | 2 {
    const { store } = this.commands;
    const holders = this.holders(h);
    if (holders.foreign()) return 0;
    const now = this.commands.nowMs();
    let wake = holders.prune(now) > 0;
    let result: 0 | 1 | 2 = 0;
    const list = holders.holds(h.owner);
    const removed = list === undefined ? undefined : removeHold(list, h.holdId);
    if (removed?.rest === '') {
      store.hdel(holders.hash, `o:${h.owner}`);
      holders.dropWeight(h.owner);
      store.zrem(holders.zset, h.owner);
      wake = true;
      result = 1;
    } else if (removed) {
      store.hset(holders.hash, { [`o:${h.owner}`]: removed.rest });
      result = 2;
    }
    holders.syncTtl(now);
    if (wake) store.publish(h.names.channel, 'released');
    return result;
  }

  private holders(r: HoldRef): MemoryHolders {
    return new MemoryHolders(this.commands.store, r.names.lock, r.names.aux);
  }
}
