import { DistributedLockService } from '../../lib';
import { currentFence } from '../../lib/fencing';
import { FencedRecord, FencedStore } from './fenced-store';
import { lockKey } from './inventory-lock';
import { checkedQuantities, InventoryStore } from './inventory-store';

/** The default InventoryStore: records in the app's Redis, written by FencedStore's script. */
export class RedisInventoryStore extends InventoryStore {
  constructor(
    private readonly store: FencedStore,
    private readonly locks: DistributedLockService,
  ) {
    super();
  }

  read(sku: string): Promise<FencedRecord> {
    return this.store.read(sku);
  }

  async update(skus: readonly string[], change: (quantities: number[]) => number[]): Promise<FencedRecord[]> {
    // The token of each SKU's lock, from the async context (throws when the caller holds none).
    const tokens = skus.map((sku) => Number(currentFence(this.locks, lockKey(sku)).token));
    const records = await Promise.all(skus.map((sku) => this.store.read(sku)));
    const quantities = checkedQuantities(skus, change(records.map((r) => r.qty)));
    return this.store.write(skus.map((sku, i) => ({ sku, qty: quantities[i]!, token: tokens[i]! })));
  }
}
