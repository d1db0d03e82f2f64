import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';

/** Balances in Redis, read then written (two steps): an update needs the account's lock around it. */
@Injectable()
export class LedgerService implements OnApplicationShutdown {
  private readonly redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

  async balance(account: string): Promise<number> {
    return Number(await this.redis.get(`balance:${account}`));
  }

  async write(account: string, balance: number): Promise<void> {
    await this.redis.set(`balance:${account}`, balance);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit();
  }
}
