import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { DistributedLockEngine } from './distributed-lock-engine';
import { DistributedLockInterceptor } from './distributed-lock.interceptor';
import {
  DistributedLockConfigurableModule,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_SETTINGS,
} from './distributed-lock.module-definition';
import { engineProvider, settingsProvider } from './distributed-lock.providers';
import { DistributedLockService } from './distributed-lock.service';
import { SkipRouteCheck } from './skip-route.check';
import { DistributedLockTelemetry } from './telemetry.provider';

/**
 * Distributed locks on Redis for Nest: `DistributedLockModule.forRoot({ redis })` or
 * `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`, `isGlobal` to provide
 * DistributedLockService everywhere. Registers a global interceptor that answers lock errors on
 * HTTP routes (turned off by `httpErrors: false`).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    SkipRouteCheck,
    DistributedLockTelemetry,
    settingsProvider,
    engineProvider,
    DistributedLockService,
    { provide: APP_INTERCEPTOR, useClass: DistributedLockInterceptor },
  ],
  exports: [
    DistributedLockService,
    DistributedLockEngine,
    DISTRIBUTED_LOCK_SETTINGS,
    DISTRIBUTED_LOCK_MODULE_OPTIONS,
  ],
})
export class DistributedLockModule extends DistributedLockConfigurableModule {}
