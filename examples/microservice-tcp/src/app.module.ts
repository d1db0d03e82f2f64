import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { SeatsController } from './seats.controller';
import { SeatsService } from './seats.service';

@Module({
  imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })],
  controllers: [SeatsController],
  providers: [SeatsService],
})
export class AppModule {}
