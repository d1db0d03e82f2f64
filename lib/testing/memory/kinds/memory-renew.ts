import type { RenewReply } from '../../../core/kinds/reply';
import type { HoldRef, RenewRequest } from '../../../core/kinds/lock-kind';
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

/**
 * mutex-release.lua (also the fair lock's release): removes one hold; the last one deletes the lock,
 * reserves it (`{ x = '+' .. process }`) for the process that has waited longest when a cohort ended
 * at its bound, and publishes only when someone waits. 1 released, 2 nested holds remain, 0 not held.
 */
export function releaseOwnedHold(
  store: MemoryStore,
  hold: HoldRef,
  /** The fair lock: `aux` is its queue; wake only its head, by `@<owner>`. */
  alwaysPublish: boolean,
): 0 | 1 | 2 {
  const { lock, aux: waiters, channel } = hold.names;
  // ARGV[6..7]: the releasing process at its cohort bound ('' = none), and how long the reservation lasts.
  const yieldProcess = hold.yieldTo?.process ?? '';
  const fields = store.hash(lock);
  if (!fields || fields.get('owner') !== hold.owner) return 0;
  if (store.hdel(lock, hold.holdId) === 0) return 0;
  if (fields.size > 2) return 2;
  store.del(lock);
  const waiting = alwaysPublish
    ? []
    : store
        .zrange(waiters)
        .slice(0, 2)
        .map(([member]) => member);
  if (yieldProcess !== '') {
    const next = waiting[0] === yieldProcess ? waiting[1] : waiting[0];
    if (next !== undefined) {
      store.hset(lock, { x: `+${next}` });
      store.pexpire(lock, hold.yieldTo?.ms ?? 0);
      // Reserved once: a live process records itself again if it still waits, a dead one is forgotten.
      store.zrem(waiters, next);
    }
  }
  if (alwaysPublish) {
    const head = store.zrange(waiters)[0]?.[0];
    if (head !== undefined) store.publish(channel, `@${head}`);
  } else if (waiting.length > 0) {
    store.publish(channel, 'released');
  }
  return 1;
}
