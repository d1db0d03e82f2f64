import { LockUpgradeError } from '../../../core/errors';
import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../../../core/kinds/lock-kind';
import type { LockOptions } from '../../../core/options/lock-options';
import { busy, granted, MemoryCommands, notHeld } from '../memory-commands';
import { MemoryHolders, removeHold } from './memory-holders';

/**
 * The read-write lock in memory: rw-acquire.lua / rw-release.lua / rw-abandon.lua /
 * holders-renew.lua. Many readers or one writer; the writer may read too (downgrade), a pure
 * reader asking to write gets LockUpgradeError; a refused writer's marker makes new readers wait.
 */
export class MemoryReadWriteLock implements LockKind {
  readonly tag = 'rw' as const;
  readonly exclusive = false;
  readonly reentrant = true;

  constructor(
    private readonly commands: MemoryCommands,
    private readonly markerTtlMs: number,
  ) {}

  isExclusive(options: LockOptions): boolean {
    return options.mode === 'write';
  }

  attempt(r: AttemptRequest): Promise<AttemptResult> {
    return this.commands.run(() => this.acquire(r), 'rw-acquire', r.key);
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
        if (removed) {
          if (removed.mode === 'w' && !` ${removed.rest}`.includes(' w:')) {
            store.hdel(holders.hash, 'writer');
            wake = true;
          }
          if (removed.rest === '') {
            store.hdel(holders.hash, `o:${h.owner}`);
            store.zrem(holders.zset, h.owner);
            if (!store.exists(holders.zset)) wake = true;
            result = 'released';
          } else {
            store.hset(holders.hash, { [`o:${h.owner}`]: removed.rest });
            result = 'still-held';
          }
        }
        holders.syncTtl(now);
        if (wake) store.publish(h.names.channel);
        return result;
      },
      'rw-release',
      h.key,
    );
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return this.commands.run(() => {
      const now = this.commands.nowMs();
      return requests.map((r) => this.holders(r).renew(r, now));
    }, 'holders-renew');
  }

  async abandon(r: AttemptRequest): Promise<void> {
    if (r.options.mode !== 'write') return; // only writers leave something behind while waiting
    const { store } = this.commands;
    await this.commands
      .run(
        () => {
          const holders = this.holders(r);
          if (holders.field('ww') !== r.owner) return;
          store.hdel(holders.hash, 'ww', 'wwx');
          holders.syncTtl(this.commands.nowMs());
          store.publish(r.names.channel);
        },
        'rw-abandon',
        r.key,
      )
      .catch(() => undefined); // the marker expires by itself
  }

  private acquire(r: AttemptRequest): AttemptResult {
    const { store } = this.commands;
    const holders = this.holders(r);
    const mode = r.options.mode === 'write' ? 'w' : 'r';
    const now = this.commands.nowMs();
    if (holders.prune(now) > 0) store.publish(r.names.channel);
    const writer = holders.field('writer');

    if (holders.holds(r.owner) !== undefined) {
      if (mode === 'w' && writer !== r.owner) throw new LockUpgradeError(r.key);
      holders.addHold(r.owner, `${mode}:${r.holdId}`);
      holders.extendTo(r.owner, now + r.leaseMs);
      holders.syncTtl(now);
      return granted(0, true);
    }
    if (r.reenter) return notHeld;

    let marker = holders.field('ww');
    if (marker !== undefined && (Number(holders.field('wwx') ?? '0') || 0) <= now) {
      store.hdel(holders.hash, 'ww', 'wwx');
      marker = undefined;
    }
    const held = store.zset(holders.zset)?.size ?? 0;

    if (mode === 'w') {
      if (held > 0) {
        // The first waiting writer owns the marker; other writers compete when the lock frees.
        if (marker === undefined || marker === r.owner) {
          store.hset(holders.hash, { ww: r.owner, wwx: String(now + this.markerTtlMs) });
        }
        holders.syncTtl(now);
        return busy(holders.lastDeadline() - now);
      }
      if (marker === r.owner) store.hdel(holders.hash, 'ww', 'wwx');
      store.hset(holders.hash, { writer: r.owner });
    } else {
      if (writer !== undefined) return busy(holders.lastDeadline() - now);
      if (marker !== undefined) return busy(-1);
    }

    store.hset(holders.hash, { [`o:${r.owner}`]: `${mode}:${r.holdId}` });
    store.zadd(holders.zset, now + r.leaseMs, r.owner);
    const token = this.commands.nextFence(r.names.fence);
    holders.syncTtl(now);
    return granted(token);
  }

  private holders(r: HoldRef): MemoryHolders {
    return new MemoryHolders(this.commands.store, r.names.lock, r.names.aux);
  }
}
