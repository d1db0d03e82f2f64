import { fairDeadlinesKey } from '../../../core/kinds/fair-lock';
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
import { releaseOwnedHold, renewOwned } from './memory-renew';

/**
 * The fair lock in memory: fair-acquire.lua / fair-abandon.lua, with the mutex's release and
 * renewal. The holder is a mutex-format hash; waiters queue in a sorted set (arrival tickets) with
 * per-waiter deadlines pushed `waiterTtlMs` ahead by each attempt; only the head takes a free lock.
 */
export class MemoryFairLock implements LockKind {
  readonly tag = 'fair' as const;
  readonly exclusive = false;
  readonly reentrant = true;

  constructor(
    private readonly commands: MemoryCommands,
    private readonly waiterTtlMs: number,
  ) {}

  attempt(r: AttemptRequest): Promise<AttemptResult> {
    return this.commands.run(() => this.acquire(r), 'fair-acquire', r.key);
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    return this.commands.run(
      () => releaseOwnedHold(this.commands.store, h.names.lock, h.owner, h.holdId, h.names.channel),
      'mutex-release',
      h.key,
    );
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return this.commands.run(() => renewOwned(this.commands.store, requests), 'renew');
  }

  async abandon(r: AttemptRequest): Promise<void> {
    const { store } = this.commands;
    const queue = r.names.aux;
    const deadlines = fairDeadlinesKey(r.names);
    await this.commands
      .run(
        () => {
          const head = store.zrange(queue)[0]?.[0];
          if (store.zrem(queue, r.owner) === 0) return;
          store.hdel(deadlines, r.owner);
          if (head === r.owner && !store.exists(r.names.lock) && store.zrange(queue).length > 0) {
            store.publish(r.names.channel);
          }
        },
        'fair-abandon',
        r.key,
      )
      .catch(() => undefined); // the place expires by itself at its deadline
  }

  private acquire(r: AttemptRequest): AttemptResult {
    const { store } = this.commands;
    const { lock, aux: queue, channel } = r.names;
    const deadlines = fairDeadlinesKey(r.names);
    const holder = store.hash(lock);
    if (holder?.get('owner') === r.owner) {
      store.hset(lock, { [r.holdId]: '1' });
      if (store.pttl(lock) < r.leaseMs) store.pexpire(lock, r.leaseMs);
      return granted(Number(holder.get('fence')), true);
    }
    if (r.reenter) return notHeld;

    const now = this.commands.nowMs();
    if (!store.zset(queue)?.has(r.owner)) {
      const last = store.zrange(queue).at(-1);
      store.zadd(queue, last ? last[1] + 1 : 1, r.owner);
    }
    store.hset(deadlines, { [r.owner]: String(now + this.waiterTtlMs) });
    store.pexpire(queue, this.waiterTtlMs);
    store.pexpire(deadlines, this.waiterTtlMs);

    // Drop dead waiters from the head (a dead waiter further back is dropped when it gets there).
    let head: string | undefined;
    let dropped = false;
    for (;;) {
      head = store.zrange(queue)[0]?.[0];
      if (head === r.owner || head === undefined) break;
      if (Number(store.hash(deadlines)?.get(head) ?? '0') > now) break;
      store.zrem(queue, head);
      store.hdel(deadlines, head);
      dropped = true;
    }

    if (holder) return busy(store.pttl(lock));
    if (head !== r.owner) {
      if (dropped) store.publish(channel);
      return busy(-1);
    }
    store.zrem(queue, r.owner);
    store.hdel(deadlines, r.owner);
    const token = this.commands.nextFence(r.names.fence);
    store.hset(lock, { owner: r.owner, fence: String(token), [r.holdId]: '1' });
    store.pexpire(lock, r.leaseMs);
    return granted(token);
  }
}
