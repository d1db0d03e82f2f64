import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import Redis from 'ioredis';
import { DistributedLock } from 'nestjs-distributed-lock';

@Injectable()
export class DigestJob implements OnApplicationShutdown {
  private readonly redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

  /**
   * Every second in every replica, and run by one of them: with `onBusy: 'skip'` the replicas that find
   * the lock taken skip this tick. The lock is kept at least half the period (the default `minHoldMs` of
   * a scheduled job), so a replica whose clock runs a little late skips too.
   */
  @Cron(CronExpression.EVERY_SECOND)
  @DistributedLock({ key: 'job:digest', onBusy: 'skip' })
  async send(): Promise<void> {
    const tick = Math.floor(Date.now() / 1000);
    // The work of the job; here it records which tick ran where.
    await this.redis.rpush('digest:runs', `${tick} ${process.pid}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit();
  }
}
