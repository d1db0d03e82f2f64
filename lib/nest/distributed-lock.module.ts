import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockEngine } from '../core';
import {
  DistributedLockConfigurableModule,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_SETTINGS,
  type DistributedLockModuleAsyncOptions,
} from './distributed-lock.module-definition';
import { engineProvider, nestLayerProviders, settingsProvider } from './distributed-lock.providers';
import { DistributedLockService } from './distributed-lock.service';

/**
 * Distributed locks on Redis for Nest: `DistributedLockModule.forRoot({ redis })` or
 * `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`; global (DistributedLockService
 * everywhere) unless `isGlobal: false`. Registers global interceptors that answer lock errors on
 * HTTP routes (turned off by `httpErrors: false`) and in GraphQL resolvers, microservice handlers
 * and WebSocket gateways (`transportErrors: false`).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [settingsProvider, engineProvider, ...nestLayerProviders],
  exports: [DistributedLockService, LockEngine, DISTRIBUTED_LOCK_SETTINGS, DISTRIBUTED_LOCK_MODULE_OPTIONS],
})
export class DistributedLockModule extends DistributedLockConfigurableModule {
  /** As the builder's, but refuses options without a way to build them (else Nest's "argument at index [0]"). */
  static override forRootAsync(options: DistributedLockModuleAsyncOptions): DynamicModule {
    const given = (typeof options === 'object' && options) || {};
    if (!given.useFactory && !given.useClass && !given.useExisting) {
      throw new TypeError(
        'DistributedLockModule.forRootAsync() needs one of useFactory, useClass or useExisting ' +
          '(e.g. { imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({ redis: ... }) })',
      );
    }
    return super.forRootAsync(options);
  }
}
