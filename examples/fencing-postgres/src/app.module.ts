import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { StockController } from './stock.controller';
import { StockService } from './stock.service';

@Module({
  imports: [
    DistributedLockModule.forRoot({
      redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      // The watchdog's lease (default 30 s): how long a crashed or paused holder keeps the lock.
      watchdogLeaseMs: Number(process.env.LOCK_LEASE_MS ?? 30_000),
    }),
  ],
  controllers: [StockController],
  providers: [StockService],
})
export class AppModule {}
