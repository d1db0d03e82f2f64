import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { SeckillController } from './seckill.controller';
import { StockService } from './stock.service';

@Module({
  imports: [DistributedLockModule.forRoot({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })],
  controllers: [SeckillController],
  providers: [StockService],
})
export class AppModule {}
