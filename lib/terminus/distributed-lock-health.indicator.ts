// Past the core's public surface: describe words a bad option the way the core does.
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { describe } from '../core/internal';
import type { DistributedLockHealth } from '../nest/interfaces';
import { DistributedLockService } from '../nest/distributed-lock.service';

/** Default key of the indicator in Terminus' report. */
export const DISTRIBUTED_LOCK_HEALTH_KEY = 'distributed-lock';

/**
 * Default time the indicator waits for the lock service's readiness before it reports down: within
 * Kubernetes' default probe timeout (1 s), far below the 5 s `commandTimeoutMs` of a frozen Redis.
 */
export const DEFAULT_HEALTH_TIMEOUT_MS = 1_000;

/** Options of DistributedLockHealthIndicator.isHealthy(). */
export interface DistributedLockHealthCheckOptions {
  /** Report down when the readiness check has not answered within this many ms. Default 1000. */
  timeoutMs?: number;
}

/**
 * Terminus 11 health indicator for the lock service: `up` with the Redis round trip, held and waiting
 * locks; `down` with the reason when Redis does not answer within `timeoutMs` (default 1 s) or the
 * service is closed. Written on HealthIndicatorService (the HealthIndicator base class is
 * deprecated in Terminus 11).
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
    options: DistributedLockHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const timeoutMs = healthTimeout(options);
    const session = this.indicator.check(key);
    const report = await this.withinTimeout(timeoutMs);
    if (report === undefined) {
      return session.down({ reason: `no answer from the lock service's Redis within ${timeoutMs} ms` });
    }
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

  /** readiness(), or undefined when it has not answered within `timeoutMs` (it then settles unseen). */
  private withinTimeout(timeoutMs: number): Promise<DistributedLockHealth | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, undefined);
    });
    return Promise.race([this.readiness(), expired]).finally(() => clearTimeout(timer));
  }
}

function healthTimeout(options: unknown): number {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`isHealthy() options must be an object, got ${describe(options)}`);
  }
  const { timeoutMs = DEFAULT_HEALTH_TIMEOUT_MS, ...rest } = options as DistributedLockHealthCheckOptions;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new TypeError(`Unknown isHealthy() option "${unknown}"`);
  if (typeof timeoutMs !== 'number') {
    throw new TypeError(`isHealthy() timeoutMs must be a number, got ${describe(timeoutMs)}`);
  }
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
    throw new RangeError(
      `isHealthy() timeoutMs must be a whole number of ms from 1 to 2147483647, got ${timeoutMs}`,
    );
  }
  return timeoutMs;
}
