import type { FencedRecord } from './fenced-store';

/**
 * Where inventory quantities live: the Redis fenced store (the default) or PostgreSQL through the
 * fencing SQL helper when `DATABASE_URL` is set (inventory.module.ts picks one). Either way a write
 * carries the fence of the SKU's lock, which the store takes from the async context
 * (`currentFence(locks, lockKey(sku))`): callers hold the locks, the store never sees a handle.
 */
export abstract class InventoryStore {
  /** The record of `sku` (qty 0, fence 0 when it was never written). */
  abstract read(sku: string): Promise<FencedRecord>;

  /**
   * Reads the quantities of `skus`, lets `change` compute their new quantities (it may throw to
   * write nothing) and writes them, all or nothing, each with the fence of its SKU's lock. The
   * caller's async context must hold every SKU's lock; a stale fence throws StaleFenceError.
   */
  abstract update(
    skus: readonly string[],
    change: (quantities: number[]) => number[],
  ): Promise<FencedRecord[]>;
}

/** Checks what `change` returned: one whole quantity >= 0 per SKU. */
export function checkedQuantities(skus: readonly string[], quantities: number[]): number[] {
  if (quantities.length !== skus.length || !quantities.every((q) => Number.isSafeInteger(q) && q >= 0)) {
    throw new RangeError(`expected ${skus.length} whole quantities >= 0, got ${JSON.stringify(quantities)}`);
  }
  return quantities;
}
