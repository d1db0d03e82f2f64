// nestjs-distributed-lock/terminus: the Terminus 11 health indicator (needs the optional peer @nestjs/terminus).
/**
 * The Terminus health indicator (needs the optional peer `@nestjs/terminus`).
 * @module nestjs-distributed-lock/terminus
 */
export {
  DistributedLockHealthIndicator,
  DISTRIBUTED_LOCK_HEALTH_KEY,
  DEFAULT_HEALTH_TIMEOUT_MS,
} from './distributed-lock-health.indicator';
export type { DistributedLockHealthCheckOptions } from './distributed-lock-health.indicator';
export { DistributedLockHealthModule } from './distributed-lock-health.module';
