import { ConflictException, Controller, Param, Post } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DistributedLock, DistributedLockService } from 'nestjs-distributed-lock';

@Controller('reports')
export class ReportsController {
  constructor(private readonly locks: DistributedLockService) {}

  /**
   * Builds a report in 50 steps of 200 ms, one build per report at a time (a second one gets 423).
   * Between steps it checks the lock's signal: an operator's force release (or a lost lock) stops it.
   */
  @Post(':id')
  @DistributedLock({ key: 'report:{0}', waitMs: 0 })
  async build(@Param('id') id: string) {
    const lock = this.locks.current()!;
    for (let step = 1; step <= 50; step++) {
      if (lock.signal.aborted)
        throw new ConflictException(`report ${id}: stopped at step ${step}, lock lost`);
      await sleep(200);
    }
    return { id, steps: 50 };
  }
}
