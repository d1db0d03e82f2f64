import type { Fence } from './fence';
import type { StoredFence } from './stale-fence.error';

/*
 * The rule every fenced storage applies, here once in TypeScript (the in-process ledger uses it;
 * the specs run the same table of cases through every adapter). The resource keeps the (fence,
 * owner) of its last accepted writer and accepts a write when
 *
 *     token > fence   OR   (token = fence AND owner = stored owner)
 *
 * The second arm lets one grant write several times (re-entry, several writes in one critical
 * section). SQL:   lock_fence < $token OR (lock_fence = $token AND lock_owner = $owner)
 * Lua:             redis/fenced-write.lua. Anything else is refused and nothing is written.
 */

/** True when storage holding `stored` (null: never written with a fence) accepts `write`. */
export function admitsFence(stored: StoredFence | null, write: Pick<Fence, 'token' | 'owner'>): boolean {
  if (stored === null) return true;
  const token = BigInt(write.token);
  const fence = BigInt(stored.token);
  return token > fence || (token === fence && write.owner === stored.owner);
}
