import { BadRequestException, Injectable } from '@nestjs/common';
import { DistributedLockService, LockOptions } from '../../lib';
import { FencedRecord } from './fenced-store';
import { InsufficientStockException } from './inventory-errors';
import { lockKey } from './inventory-lock';
import { InventoryStore } from './inventory-store';

export { lockKey } from './inventory-lock';

/** Both records after a transfer. */
export interface TransferResult {
  from: FencedRecord;
  to: FencedRecord;
}

/** Lock options of every inventory lock: the module defaults (wait LOCK_WAIT_MS, watchdog lease). */
const INVENTORY_LOCK: LockOptions = {};

/**
 * Inventory that locks BY HAND with the injected lock service, the way a service does when the
 * lock key is not simply a method argument. Every write goes to the InventoryStore (Redis, or
 * PostgreSQL with DATABASE_URL), which takes the fence of the lock from the async context, so a
 * holder that lost its lock (paused past its lease) and writes late is refused by the storage
 * rather than trusted.
 */
@Injectable()
export class InventoryService {
  constructor(
    private readonly locks: DistributedLockService,
    private readonly store: InventoryStore,
  ) {}

  /** The record of `sku`: quantity and the fencing token of its last writer. */
  get(sku: string): Promise<FencedRecord> {
    return this.store.read(sku);
  }

  /** Adds `qty` units to `sku` under its lock (`using()` releases it whatever happens). */
  restock(sku: string, qty: number): Promise<FencedRecord> {
    return this.locks.using(lockKey(sku), INVENTORY_LOCK, async () => {
      const [written] = await this.store.update([sku], ([stock]) => [stock! + qty]);
      return written!;
    });
  }

  /**
   * Moves `qty` units from one SKU to another holding BOTH locks, taken together by one multi-key
   * lock: all or none, and deadlock-free whatever order callers name the SKUs in (two opposite
   * transfers a→b and b→a never each hold one lock and wait for the other). Each key keeps its own
   * fencing token, and each write carries the token of its own SKU's lock.
   */
  transfer(from: string, to: string, qty: number): Promise<TransferResult> {
    if (from === to) throw new BadRequestException('"from" and "to" must be different SKUs');
    return this.locks.using([lockKey(from), lockKey(to)], INVENTORY_LOCK, async () => {
      const [written1, written2] = await this.store.update([from, to], ([source, target]) => {
        if (source! < qty) throw new InsufficientStockException(from, source!, qty);
        return [source! - qty, target! + qty];
      });
      return { from: written1!, to: written2! };
    });
  }
}
