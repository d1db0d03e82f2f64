import { fairDeadlinesKey, fairQueueEntry } from '../../../core/kinds/fair-lock';
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
import { decodeReleaseCode, decodeRenewCode, MemoryCommands } from '../memory-commands';
import { releaseOwnedHold, renewOwned } from './memory-renew';

const WANTED = ['hash', 'zset', 'hash'] as const;

/**
 * The fair lock in memory: fair-acquire.lua / fair-abandon.lua, with the mutex's release and
 * renewal. The holder is a mutex-format hash; entries (waiters, or processes with fair cohorts)
 * queue in a sorted set (arrival tickets) with per-entry deadlines pushed `waiterTtlMs` ahead by each
 * attempt; only the head takes a free lock, and only the head is woken (`@<entry>`).
 */
export class MemoryFairLock implements LockKind {
  readonly tag = 'fair' as const;
  /** With fair cohorts only the local head waiter attempts (for the process' entry), as on Redis. */
  readonly exclusive: boolean;
  readonly reentrant = true;
  /** Fair cohorts: grants reserve fencing tokens for local hand-offs, as on Redis. */
  readonly cohorts: boolean;
  readonly directedWakeupSleepMs: number;

  constructor(
    private readonly commands: MemoryCommands,
    private readonly waiterTtlMs: number,
    cohorts = false,
  ) {
    this.directedWakeupSleepMs = Math.max(1, Math.floor(waiterTtlMs / 2));
    this.exclusive = this.cohorts = cohorts;
  }

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.commands.run(() => this.acquire(r), 'fair-acquire', r.key);
    return decodeAttemptReply(reply, r.key, [
      r.names.lock,
      r.names.aux,
      fairDeadlinesKey(r.names),
      r.names.fence,
    ]);
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const code = await this.commands.run(
      () => releaseOwnedHold(this.commands.store, h, true),
      'mutex-release',
      h.key,
    );
    return decodeReleaseCode(code);
  }

  async renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    const codes = await this.commands.run(() => renewOwned(this.commands.store, requests), 'renew');
    return codes.map(decodeRenewCode);
  }

  async abandon(r: AttemptRequest): Promise<void> {
    await this.commands.run(() => this.leave(r), 'fair-abandon', r.key).catch(() => undefined); // the place expires by itself at its deadline
  }

  /** fair-abandon.lua: 1 left the queue, 0 was not in it. */
  private leave(r: AttemptRequest): 0 | 1 {
    const { store } = this.commands;
    const queue = r.names.aux;
    const deadlines = fairDeadlinesKey(r.names);
    const dt = store.type(deadlines);
    if (store.type(queue) !== 'zset' || (dt !== 'hash' && dt !== 'none')) return 0;
    const entry = fairQueueEntry(r);
    const head = store.zrange(queue)[0]?.[0];
    if (store.zrem(queue, entry) === 0) return 0;
    store.hdel(deadlines, entry);
    if (head === entry && !store.exists(r.names.lock)) {
      // Only the new head may take the free lock: wake just that waiter.
      const next = store.zrange(queue)[0]?.[0];
      if (next !== undefined) store.publish(r.names.channel, `@${next}`);
    }
    return 1;
  }

  /** fair-acquire.lua. */
  private acquire(r: AttemptRequest): AttemptReply {
    const { store } = this.commands;
    const { lock, aux: queue, channel } = r.names;
    const deadlines = fairDeadlinesKey(r.names);
    const entry = fairQueueEntry(r);
    const keys = [lock, queue, deadlines];
    for (let i = 0; i < 3; i++) {
      const kind = store.type(keys[i]!);
      if (kind !== 'none' && (kind !== WANTED[i] || store.pttl(keys[i]!) < 0)) return [-1, kind, i + 1];
    }

    const holder = store.hash(lock);
    if (holder?.get('owner') === r.owner) {
      store.hset(lock, { [r.holdId]: '1' });
      if (store.pttl(lock) < r.leaseMs) store.pexpire(lock, r.leaseMs);
      return [2, Number(holder.get('fence'))];
    }
    if (r.reenter) return [-2];

    const now = this.commands.nowMs();
    // Join at the tail, or keep the place taken by an earlier attempt.
    if (!store.zset(queue)?.has(entry)) {
      const last = store.zrange(queue).at(-1);
      store.zadd(queue, last ? last[1] + 1 : 1, entry);
    }
    store.hset(deadlines, { [entry]: String(now + this.waiterTtlMs) });
    // Every deadline is at most now + ttl, so the queue's keys outlive all of them.
    store.pexpire(queue, this.waiterTtlMs);
    store.pexpire(deadlines, this.waiterTtlMs);

    // Drop dead waiters from the head (a dead waiter further back is dropped when it gets there).
    let head: string | undefined;
    let dropped = false;
    for (;;) {
      head = store.zrange(queue)[0]?.[0];
      if (head === entry || head === undefined) break;
      if ((Number(store.hash(deadlines)?.get(head) ?? '0') || 0) > now) break;
      store.zrem(queue, head);
      store.hdel(deadlines, head);
      dropped = true;
    }

    if (holder) return [0, store.pttl(lock)];
    if (head !== entry) {
      // A free lock whose head waiter just changed: let the new head try at once.
      if (dropped) store.publish(channel, `@${head}`);
      return [0, -1];
    }
    store.zrem(queue, entry);
    store.hdel(deadlines, entry);
    const token = this.commands.nextFence(r.names.fence, r.reserveTokens ?? 1);
    store.hset(lock, { owner: r.owner, fence: String(token), [r.holdId]: '1' });
    store.pexpire(lock, r.leaseMs);
    return [1, token];
  }
}
