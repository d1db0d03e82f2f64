import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { DistributedLockHealth } from '../nest/interfaces';
import { DistributedLockService } from '../nest/distributed-lock.service';

/** Default key of the indicator in Terminus' report. */
export const DISTRIBUTED_LOCK_HEALTH_KEY = 'distributed-lock';

/**
 * Terminus 11 health indicator for the lock service: `up` with the Redis round trip, held and waiting
 * locks; `down` with the reason when Redis does not answer or the service is closed. Written on
 * HealthIndicatorService (the HealthIndicator base class is deprecated in Terminus 11).
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.locks.isHealthy()]); }
 * ```
 */
@Injectable()
export class DistributedLockHealthIndicator {
  constructor(
    private readonly locks: DistributedLockService,
    private readonly indicator: HealthIndicatorService,
  ) {}

  /** `{ [key]: { status: 'up' | 'down', ... } }` for HealthCheckService.check(). */
  async isHealthy<const Key extends string = typeof DISTRIBUTED_LOCK_HEALTH_KEY>(
    key: Key = DISTRIBUTED_LOCK_HEALTH_KEY as Key,
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.indicator.check(key);
    const report = await this.readiness();
    const counts = { held: report.held, waiting: report.waiting };
    if (report.status === 'up') return session.up({ redisMs: report.redis, ...counts });
    return session.down({ reason: report.error ?? 'the lock service is not ready', ...counts });
  }

  /**
   * The one call that asks the lock service whether it is ready (today its health(): a PING round
   * trip and whether it is closed). Override to add conditions of your own.
   */
  protected readiness(): Promise<DistributedLockHealth> {
    return this.locks.health();
  }
}
