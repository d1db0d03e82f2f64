import { Injectable } from '@nestjs/common';
import { AppRedis } from '../redis/app-redis';
import { CriticalPause } from './critical-pause';
import { SoldOutException } from './sold-out.exception';

/** Stock and sales of one item. */
export interface ItemStock {
  itemId: string;
  stock: number;
  sold: number;
}

/**
 * The seckill data: `stock` and `sold` counters in Redis. The purchase is DELIBERATELY a
 * non-atomic read-modify-write (GET, await, SET, INCR) — the kind of code a distributed lock
 * exists to protect. Callers decide whether to guard it (see SeckillController).
 */
@Injectable()
export class SeckillService {
  constructor(
    private readonly redis: AppRedis,
    private readonly pause: CriticalPause,
  ) {}

  /** Current stock and units sold (0 and 0 for an unknown item). */
  async stockOf(itemId: string): Promise<ItemStock> {
    const [stock, sold] = await this.redis.client.mget(this.stockKey(itemId), this.soldKey(itemId));
    return { itemId, stock: Number(stock ?? 0), sold: Number(sold ?? 0) };
  }

  /** Puts `stock` units on sale and zeroes the sales counter. */
  async reset(itemId: string, stock: number): Promise<ItemStock> {
    await this.redis.client.mset(this.stockKey(itemId), String(stock), this.soldKey(itemId), '0');
    return { itemId, stock, sold: 0 };
  }

  /** Sells one unit: GET stock, pause, SET stock - 1, INCR sold. Throws SoldOutException at 0. */
  async purchase(itemId: string): Promise<ItemStock> {
    const client = this.redis.client;
    const stock = Number((await client.get(this.stockKey(itemId))) ?? 0);
    if (stock <= 0) throw new SoldOutException(itemId);
    await this.pause.wait(itemId);
    await client.set(this.stockKey(itemId), String(stock - 1));
    const sold = await client.incr(this.soldKey(itemId));
    return { itemId, stock: stock - 1, sold };
  }

  private stockKey(itemId: string): string {
    return this.redis.key(`seckill:${itemId}:stock`);
  }

  private soldKey(itemId: string): string {
    return this.redis.key(`seckill:${itemId}:sold`);
  }
}
