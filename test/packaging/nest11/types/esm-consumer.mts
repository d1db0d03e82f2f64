// An ES module consumer (Nest 11 or 12): the `import` condition's types must check with skipLibCheck off.
import { Controller, Get, Module } from '@nestjs/common';
import {
  DistributedLock,
  DistributedLockModule,
  DistributedLockService,
  LockNotAcquiredError,
  type LockHandle,
} from 'nestjs-distributed-lock';
import { LockEngine, LockLostError } from 'nestjs-distributed-lock/core';

@Controller('seckill')
export class SeckillController {
  constructor(private readonly locks: DistributedLockService) {}

  @Get()
  @DistributedLock({ key: 'seckill', waitMs: 0 })
  async buy(): Promise<number | undefined> {
    const lock: LockHandle | undefined = this.locks.current();
    return lock?.fencingToken;
  }
}

@Module({
  imports: [DistributedLockModule.forRoot({ redis: 'redis://127.0.0.1:6379' })],
  controllers: [SeckillController],
})
export class AppModule {}

export function isBusy(error: unknown): boolean {
  return error instanceof LockNotAcquiredError && !(error instanceof LockLostError);
}
export type Engine = LockEngine;
