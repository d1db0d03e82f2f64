import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { DistributedLockConsoleModule } from 'nestjs-distributed-lock/console';
import { OperatorGuard } from './operator.guard';
import { ReportsController } from './reports.controller';

@Module({
  imports: [
    DistributedLockModule.forRoot({ redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }),
    // The console at /locks, for operators only (OperatorGuard), with force release allowed.
    DistributedLockConsoleModule.register({
      path: 'locks',
      guards: [OperatorGuard],
      allowForceRelease: true,
      releasedBy: () => 'operator',
    }),
  ],
  controllers: [ReportsController],
})
export class AppModule {}
