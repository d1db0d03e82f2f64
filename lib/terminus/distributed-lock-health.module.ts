import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DistributedLockHealthIndicator } from './distributed-lock-health.indicator';

/**
 * TerminusModule plus DistributedLockHealthIndicator, for apps whose DistributedLockModule is global
 * (`isGlobal: true`). Otherwise list DistributedLockHealthIndicator in the providers of a module that
 * imports both TerminusModule and DistributedLockModule.
 */
@Module({
  imports: [TerminusModule],
  providers: [DistributedLockHealthIndicator],
  exports: [DistributedLockHealthIndicator, TerminusModule],
})
export class DistributedLockHealthModule {}
