/*
 * One replica of a scheduled service, as its own OS process (spawned by cron-replica-processes.spec.ts).
 * Three @Cron('* * * * * *') jobs share a lock per job across replicas with onBusy: 'skip' (and the
 * default scheduled minHoldMs). Each run appends `<tickSecond> <replica>` to the job's Redis list.
 * SKEW_MS shifts this process' clock (Date.now, which cron and luxon read) before Nest loads.
 */
import './skew-clock';
import 'reflect-metadata';
import { Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import Redis from 'ioredis';
import { DistributedLock, DistributedLockModule } from '../../../lib';
import { emit, onParentMessage, requiredEnv } from '../worker-io';

const redisUrl = requiredEnv('REDIS_URL');
const replica = requiredEnv('REPLICA');
const prefix = requiredEnv('LIST_PREFIX');
const log = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 });

/** The tick this run belongs to: the nearest whole second (a skewed or late timer still rounds to it). */
const tickSecond = (): number => Math.round(Date.now() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function record(job: string, workMs: number): Promise<void> {
  await log.rpush(`${prefix}${job}`, `${tickSecond()} ${replica}`);
  await sleep(workMs);
}

@Injectable()
class Jobs implements OnApplicationShutdown {
  @Cron('* * * * * *', { name: 'fast' })
  @DistributedLock({ key: 'job:fast', onBusy: 'skip' })
  async fast(): Promise<void> {
    await record('fast', 1);
  }

  @Cron('* * * * * *', { name: 'medium' })
  @DistributedLock({ key: 'job:medium', onBusy: 'skip' })
  async medium(): Promise<void> {
    await record('medium', 20);
  }

  // Longer than the period: the lock is still held at the next tick, which is skipped everywhere.
  @Cron('* * * * * *', { name: 'long' })
  @DistributedLock({ key: 'job:long', onBusy: 'skip' })
  async long(): Promise<void> {
    await record('long', 1500);
  }

  async onApplicationShutdown(): Promise<void> {
    await log.quit();
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    DistributedLockModule.forRoot({ redis: redisUrl, keyPrefix: `${prefix}lock:` }),
  ],
  providers: [Jobs],
})
class ReplicaModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ReplicaModule, { logger: false });
  const stop = onParentMessage((message: { type: string }) => {
    if (message.type !== 'stop') return;
    stop();
    void app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  emit({ type: 'ready', replica, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
