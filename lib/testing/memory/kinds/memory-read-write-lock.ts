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
import type { LockOptions } from '../../../core/options/lock-options';
import { decodeReleaseCode, decodeRenewCode, MemoryCommands } from '../memory-commands';
import { MemoryHolders, removeHold } from './memory-holders';

/**
 * The read-write lock in memory: read-write-acquire.lua / read-write-release.lua /
 * read-write-abandon.lua / holders-renew.lua. Many readers or one writer; the writer may read too
 * (downgrade), a pure reader asking to write gets LockUpgradeError; a refused writer's marker makes
 * new readers wait.
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

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.commands.run(() => this.acquire(r), 'read-write-acquire', r.key);
    return decodeAttemptReply(reply, r.key, [r.names.lock, r.names.aux]);
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const code = await this.commands.run(() => this.releaseHold(h), 'read-write-release', h.key);
    return decodeReleaseCode(code);
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    const codes = await this.commands.run(() => {
      const now = this.commands.nowMs();
      return requests.map((r) => this.holders(r).renew(r, now));
    }, 'holders-renew');
    return codes.map(decodeRenewCode);
  }

  async abandon(r: AttemptRequest): Promise<void> {
    if (r.options.mode !== 'write') return; // only writers leave something behind while waiting
    await this.commands
      .run(
        () => this.holders(r).dropReservation(r.owner, r.names.channel, this.commands.nowMs()),
        'read-write-abandon',
        r.key,
      )
      .catch(() => undefined); // the marker expires by itself
  }

  /** read-write-acquire.lua. */
  private acquire(r: AttemptRequest): AttemptReply {
    const { store } = this.commands;
    const holders = this.holders(r);
    const mode = r.options.mode === 'write' ? 'w' : 'r';
    const bad = holders.foreign();
    if (bad) return bad;
    const now = this.commands.nowMs();
    // A holder whose lease ran out frees its share: wake the other waiters too.
    if (holders.prune(now) > 0) store.publish(r.names.channel, 'released');
    const writer = holders.field('writer');

    if (holders.holds(r.owner) !== undefined) {
      if (mode === 'w' && writer !== r.owner) return [-3];
      holders.addHold(r.owner, `${mode}:${r.holdId}`);
      holders.extendTo(r.owner, now + r.leaseMs);
      holders.syncTtl(now);
      return [2, 0];
    }
    if (r.reenter) return [-2];

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
        return [0, holders.lastDeadline() - now];
      }
      if (marker === r.owner) store.hdel(holders.hash, 'ww', 'wwx');
      store.hset(holders.hash, { writer: r.owner });
    } else {
      if (writer !== undefined) return [0, holders.lastDeadline() - now];
      if (marker !== undefined) return [0, -1];
    }

    store.hset(holders.hash, { [`o:${r.owner}`]: `${mode}:${r.holdId}` });
    store.zadd(holders.zset, now + r.leaseMs, r.owner);
    const token = this.commands.nextFence(r.names.fence);
    holders.syncTtl(now);
    return [1, token];
  }

  /** read-write-release.lua. */
  private releaseHold(h: HoldRef): 0 | 1 | 2 {
    const { store } = this.commands;
    const holders = this.holders(h);
    if (holders.foreign()) return 0;
    const now = this.commands.nowMs();
    let wake = holders.prune(now) > 0;
    let result: 0 | 1 | 2 = 0;
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
        result = 1;
      } else {
        store.hset(holders.hash, { [`o:${h.owner}`]: removed.rest });
        result = 2;
      }
    }
    holders.syncTtl(now);
    if (wake) store.publish(h.names.channel, 'released');
    return result;
  }

  private holders(r: HoldRef): MemoryHolders {
    return new MemoryHolders(this.commands.store, r.names.lock, r.names.aux);
  }
}
