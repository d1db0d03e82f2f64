import type { RenewRequest, RenewResult } from '../../../core/kinds/lock-kind';
import type { MemoryStore } from '../memory-store';

/**
 * renew.lua for the mutex, the token lock and the fair lock: extends the lease when the key still
 * names this owner; `gone` when the key is absent, `taken-over` when another owner holds it.
 */
export function renewOwned(store: MemoryStore, requests: readonly RenewRequest[]): RenewResult[] {
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
      return 'renewed';
    }
    return type === 'none' ? 'gone' : 'taken-over';
  });
}

/** mutex-release.lua (also the fair lock's release): one hold; the last one deletes and wakes. */
export function releaseOwnedHold(
  store: MemoryStore,
  lock: string,
  owner: string,
  holdId: string,
  channel: string,
): 'released' | 'still-held' | 'not-held' {
  const fields = store.hash(lock);
  if (!fields || fields.get('owner') !== owner) return 'not-held';
  if (store.hdel(lock, holdId) === 0) return 'not-held';
  if (fields.size <= 2) {
    store.del(lock);
    store.publish(channel);
    return 'released';
  }
  return 'still-held';
}
