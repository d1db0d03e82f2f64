import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { DistributedLockHealth, DistributedLockService } from '../lib';

/** Readiness probe: the lock service's Redis round trip and its held/waiting locks. */
@Controller('health')
export class HealthController {
  constructor(private readonly locks: DistributedLockService) {}

  /** 200 with the health report when Redis answers, 503 with it when not. */
  @Get()
  async health(): Promise<DistributedLockHealth> {
    const report = await this.locks.health();
    if (report.status !== 'up') throw new ServiceUnavailableException(report);
    return report;
  }
}
