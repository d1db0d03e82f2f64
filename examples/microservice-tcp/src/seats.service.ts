import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';

@Injectable()
export class SeatsService implements OnApplicationShutdown {
  private readonly redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

  /** Checks the seat is free, charges (slow), then books it. Call it while holding the seat's lock. */
  async book(seat: string, customer: string): Promise<{ seat: string; customer: string }> {
    const owner = await this.redis.get(`seat:${seat}`);
    if (owner !== null) throw new RpcException({ code: 'TAKEN', message: `seat ${seat} is taken` });
    await sleep(1_500); // the payment provider
    await this.redis.set(`seat:${seat}`, customer);
    return { seat, customer };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit();
  }
}
