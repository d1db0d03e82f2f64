import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DistributedLockHealthIndicator } from './distributed-lock-health.indicator';

/**
 * TerminusModule plus DistributedLockHealthIndicator, for apps whose DistributedLockModule.forRoot()
 * (or DistributedLockTestingModule.forRoot()) is global, the default. Under `isGlobal: false`, list
 * DistributedLockHealthIndicator in the providers of a module that imports TerminusModule and the
 * module forRoot() returns.
 */
@Module({
  imports: [TerminusModule],
  providers: [DistributedLockHealthIndicator],
  exports: [DistributedLockHealthIndicator, TerminusModule],
})
export class DistributedLockHealthModule {}
