import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockEngine } from '../core';
import {
  BARE_IMPORT_EXPORTS,
  bareImportProviders,
  LOCK_MODULE_ROOT,
  lockModuleRootProvider,
} from './bare-import.providers';
import {
  DistributedLockConfigurableModule,
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_SETTINGS,
  type DistributedLockModuleAsyncOptions,
  type DistributedLockModuleRootOptions,
} from './distributed-lock.module-definition';
import { engineProvider, nestLayerProviders, settingsProvider } from './distributed-lock.providers';
import { DistributedLockService } from './distributed-lock.service';

/**
 * Distributed locks on Redis for Nest: `DistributedLockModule.forRoot({ redis })` or
 * `forRootAsync({ imports, inject, useFactory | useClass | useExisting })`; global (DistributedLockService
 * everywhere) unless `isGlobal: false`. Registers global interceptors that answer lock errors on
 * HTTP routes (turned off by `httpErrors: false`) and in GraphQL resolvers, microservice handlers
 * and WebSocket gateways (`transportErrors: false`).
 *
 * Everything is registered by forRoot() / forRootAsync(). The class alone (`imports:
 * [DistributedLockModule]`) re-exports the service and engine of a global forRoot(), and fails the
 * start-up saying what to write when there is none (bare-import.providers.ts).
 */
@Module({
  providers: bareImportProviders('DistributedLockModule'),
  exports: BARE_IMPORT_EXPORTS,
})
export class DistributedLockModule extends DistributedLockConfigurableModule {
  static override forRoot(options: DistributedLockModuleRootOptions): DynamicModule {
    return withLockLayer(super.forRoot(options));
  }

  /** As the builder's, but refuses options without a way to build them (else Nest's "argument at index [0]"). */
  static override forRootAsync(options: DistributedLockModuleAsyncOptions): DynamicModule {
    const given = (typeof options === 'object' && options) || {};
    if (!given.useFactory && !given.useClass && !given.useExisting) {
      throw new TypeError(
        'DistributedLockModule.forRootAsync() needs one of useFactory, useClass or useExisting ' +
          '(e.g. { imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({ redis: ... }) })',
      );
    }
    return withLockLayer(super.forRootAsync(options));
  }
}

/** The builder's module (the options provider, `global`) plus the lock engine and the Nest layer. */
function withLockLayer(definition: DynamicModule): DynamicModule {
  return {
    ...definition,
    imports: [...(definition.imports ?? []), DiscoveryModule],
    providers: [
      ...(definition.providers ?? []),
      settingsProvider,
      engineProvider,
      ...nestLayerProviders,
      lockModuleRootProvider,
    ],
    exports: [
      ...(definition.exports ?? []),
      DistributedLockService,
      LockEngine,
      DISTRIBUTED_LOCK_SETTINGS,
      DISTRIBUTED_LOCK_MODULE_OPTIONS,
      LOCK_MODULE_ROOT,
    ],
  };
}
