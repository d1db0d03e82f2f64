// nestjs-distributed-lock/terminus: the Terminus 11 health indicator (needs the optional peer @nestjs/terminus).
export {
  DistributedLockHealthIndicator,
  DISTRIBUTED_LOCK_HEALTH_KEY,
} from './distributed-lock-health.indicator';
export { DistributedLockHealthModule } from './distributed-lock-health.module';
