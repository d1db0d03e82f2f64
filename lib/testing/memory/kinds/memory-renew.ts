import type { RenewReply } from '../../../core/kinds/reply';
import type { RenewRequest } from '../../../core/kinds/lock-kind';
import type { MemoryStore } from '../memory-store';

/**
 * renew.lua for the mutex, the token lock and the fair lock: extends the lease when the key still
 * names this owner; 1 renewed, 0 gone (key absent), -1 held by another owner (or other data).
 */
export function renewOwned(store: MemoryStore, requests: readonly RenewRequest[]): RenewReply {
  return requests.map((r) => {
    const lock = r.names.lock;
    const type = store.type(lock);
    const current =
      type === 'hash'
        ? store.hash(lock)?.get('owner')
        : type === 'string'
          ? store.getString(lock)
          : undefined;
    if (current === r.owner) {
      store.pexpire(lock, r.leaseMs);
      return 1;
    }
    return type === 'none' ? 0 : -1;
  });
}

/** What mutex-release.lua needs besides the hold: its ARGV[5..7]. */
export interface MutexReleaseOptions {
  /** The fair lock: `waiters` is its queue; wake only its head, by `@<owner>`. */
  readonly alwaysPublish: boolean;
  /** The releasing process at its cohort bound ('' = none), and how long the reservation lasts. */
  readonly yieldProcess: string;
  readonly yieldMs: number;
}

/**
 * mutex-release.lua (also the fair lock's release): removes one hold; the last one deletes the lock,
 * reserves it (`{ x = '+' .. process }`) for the process that has waited longest when a cohort ended
 * at its bound, and publishes only when someone waits. 1 released, 2 nested holds remain, 0 not held.
 */
export function releaseOwnedHold(
  store: MemoryStore,
  keys: { lock: string; waiters: string; channel: string },
  owner: string,
  holdId: string,
  options: MutexReleaseOptions,
): 0 | 1 | 2 {
  const { lock, waiters, channel } = keys;
  const fields = store.hash(lock);
  if (!fields || fields.get('owner') !== owner) return 0;
  if (store.hdel(lock, holdId) === 0) return 0;
  if (fields.size > 2) return 2;
  store.del(lock);
  const waiting = options.alwaysPublish
    ? []
    : store
        .zrange(waiters)
        .slice(0, 2)
        .map(([member]) => member);
  if (options.yieldProcess !== '') {
    const next = waiting[0] === options.yieldProcess ? waiting[1] : waiting[0];
    if (next !== undefined) {
      store.hset(lock, { x: `+${next}` });
      store.pexpire(lock, options.yieldMs);
      // Reserved once: a live process records itself again if it still waits, a dead one is forgotten.
      store.zrem(waiters, next);
    }
  }
  if (options.alwaysPublish) {
    const head = store.zrange(waiters)[0]?.[0];
    if (head !== undefined) store.publish(channel, `@${head}`);
  } else if (waiting.length > 0) {
    store.publish(channel, 'released');
  }
  return 1;
}
