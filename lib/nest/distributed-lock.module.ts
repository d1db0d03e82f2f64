import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DistributedLockExplorer } from './distributed-lock.explorer';
import {
  DistributedLockConfigurableModule,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
} from './distributed-lock.module-definition';
import { DistributedLockService } from './distributed-lock.service';

/**
 * Distributed locks on Redis for Nest: `DistributedLockModule.forRoot({ redis })` or
 * `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`, `isGlobal` to provide
 * DistributedLockService everywhere. Exports the service and the options token (the interceptor
 * that @DistributedLock() adds to routes reads its HTTP settings from it).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [DistributedLockService, DistributedLockExplorer],
  exports: [DistributedLockService, DISTRIBUTED_LOCK_MODULE_OPTIONS],
})
export class DistributedLockModule extends DistributedLockConfigurableModule {}
