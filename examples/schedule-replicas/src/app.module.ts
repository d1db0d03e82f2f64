import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { DigestJob } from './digest.job';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    DistributedLockModule.forRoot({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }),
  ],
  providers: [DigestJob],
})
export class AppModule {}
