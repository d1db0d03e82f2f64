import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { LockController } from './lock.controller';

@Module({
  // A URL, not a client: the package itself must find ioredis (from where it is installed).
  imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL, keyPrefix: 'toolchains:' })],
  controllers: [LockController],
})
export class AppModule {}
