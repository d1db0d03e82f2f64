import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { DistributedLockHealthIndicator } from '../../lib/terminus';

/** Readiness probe through Terminus: 200 while Redis answers, 503 with the reason when not. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: DistributedLockHealthIndicator,
  ) {}

  /** `{ status, info | error: { 'distributed-lock': { status, redisMs | reason, held, waiting } } }` */
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy()]);
  }
}
