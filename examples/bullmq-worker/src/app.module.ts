import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { LedgerService } from './ledger.service';
import { TransferProcessor } from './transfer.processor';

const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

@Module({
  imports: [
    BullModule.forRoot({ connection: { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) } }),
    BullModule.registerQueue({ name: 'transfers' }),
    DistributedLockModule.forRoot({ redis: redisUrl.href }),
  ],
  providers: [LedgerService, TransferProcessor],
})
export class AppModule {}
