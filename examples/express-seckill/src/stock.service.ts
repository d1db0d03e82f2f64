import { ConflictException, Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';

/**
 * The stock, in Redis, read and written in two steps (GET, then SET): without the lock, two buyers
 * read the same count and both take the last item.
 */
@Injectable()
export class StockService implements OnApplicationShutdown {
  private readonly redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

  async set(sku: string, count: number): Promise<void> {
    await this.redis.set(`stock:${sku}`, count);
  }

  async count(sku: string): Promise<number> {
    return Number(await this.redis.get(`stock:${sku}`));
  }

  /** Takes one item; 409 when none is left. Call it while holding the item's lock. */
  async takeOne(sku: string): Promise<number> {
    const left = await this.count(sku);
    if (left <= 0) throw new ConflictException(`${sku} is sold out`);
    await this.redis.set(`stock:${sku}`, left - 1);
    return left - 1;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit();
  }
}
