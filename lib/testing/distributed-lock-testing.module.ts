import { DynamicModule, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { LockEngineOptions } from '../core';
import { LockEngine } from '../core/engine/lock-engine';
import {
  BARE_IMPORT_EXPORTS,
  bareImportProviders,
  LOCK_MODULE_ROOT,
  lockModuleRootProvider,
} from '../nest/bare-import.providers';
import {
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_SETTINGS,
} from '../nest/distributed-lock.module-definition';
import { nestLayerProviders } from '../nest/distributed-lock.providers';
import { DistributedLockService } from '../nest/distributed-lock.service';
import type { DistributedLockModuleOptions } from '../nest/interfaces';
import { DEFAULT_DRAIN_MS, DistributedLockSettings, resolveModuleOptions } from '../nest/module-options';
import { createInMemoryLockEngine } from './create-in-memory-lock-engine';
import { LockTestingControls } from './lock-testing-controls';

/**
 * Options of DistributedLockTestingModule.forRoot(): those of DistributedLockModule without a
 * connection (the engine options and the Nest ones: busyStatus, retryAfter, httpErrors,
 * transportErrors, telemetry), plus isGlobal.
 */
export interface DistributedLockTestingModuleOptions
  extends
    LockEngineOptions,
    Pick<
      DistributedLockModuleOptions,
      'busyStatus' | 'retryAfter' | 'httpErrors' | 'transportErrors' | 'telemetry'
    > {
  /**
   * Provide DistributedLockService and the controls everywhere, as DistributedLockModule.forRoot()
   * does by default. Default true; false: only to the modules that import this forRoot() module.
   */
  isGlobal?: boolean;
}

/**
 * The fault controls of the testing module's in-memory engine, injectable in a Nest test
 * (`moduleRef.get(DistributedLockTestingControls)`): the LockTestingControls class under its Nest name.
 */
export const DistributedLockTestingControls = LockTestingControls;
/** The fault controls of the testing module's in-memory engine. */
export type DistributedLockTestingControls = LockTestingControls;

/** Closes the in-memory engine at shutdown (idempotent: the service usually closed it already). */
@Injectable()
class InMemoryEngineCloser implements OnApplicationShutdown {
  constructor(private readonly controls: LockTestingControls) {}

  async onApplicationShutdown(): Promise<void> {
    await this.controls.engine.close();
  }
}

/**
 * Stands in for DistributedLockModule.forRoot() in tests: the same DistributedLockService,
 * @DistributedLock() and HTTP mapping (busy → 423, backend failure → 503), on the real lock engine
 * over an in-memory backend. Single process, no Redis: for tests only.
 *
 * Its only tie to the Nest layer is the engine's token (LockEngine, exported as DistributedLockEngine):
 * it provides the real engine over the in-memory backend there, and everything else is the
 * production Nest layer.
 *
 * Global unless `isGlobal: false`, like DistributedLockModule.forRoot(), so it replaces that one in
 * the root module of a test without touching the feature modules. The class alone (`imports:
 * [DistributedLockTestingModule]`) behaves as DistributedLockModule alone (bare-import.providers.ts).
 */
@Module({
  providers: bareImportProviders('DistributedLockTestingModule'),
  exports: BARE_IMPORT_EXPORTS,
})
export class DistributedLockTestingModule {
  /** A module with DistributedLockService and DistributedLockTestingControls on one in-memory engine. */
  static forRoot(options: DistributedLockTestingModuleOptions = {}): DynamicModule {
    const {
      isGlobal = true,
      busyStatus,
      retryAfter,
      httpErrors,
      transportErrors,
      telemetry,
      ...engineOptions
    } = options;
    // The same Nest settings as DistributedLockModule, resolved by the same function (undefined
    // ones get its defaults); the connection is a placeholder that nothing ever opens: the engine
    // below is in memory. Telemetry reads `telemetry` from the module options, as in production.
    const nestOptions = { busyStatus, retryAfter, httpErrors, transportErrors, telemetry };
    const settings = (): DistributedLockSettings =>
      resolveModuleOptions({ redis: 'redis://in-memory.invalid', ...engineOptions, ...nestOptions });
    return {
      module: DistributedLockTestingModule,
      global: isGlobal,
      imports: [DiscoveryModule],
      providers: [
        { provide: DISTRIBUTED_LOCK_MODULE_OPTIONS, useValue: options },
        { provide: DISTRIBUTED_LOCK_SETTINGS, useFactory: settings },
        {
          provide: LockTestingControls,
          useFactory: () =>
            LockTestingControls.of(createInMemoryLockEngine({ drainMs: DEFAULT_DRAIN_MS, ...engineOptions })),
        },
        // The one door: the service and the decorator reach this engine through the same token.
        {
          provide: LockEngine,
          useFactory: (controls: LockTestingControls) => controls.engine,
          inject: [LockTestingControls],
        },
        InMemoryEngineCloser,
        ...nestLayerProviders,
        lockModuleRootProvider,
      ],
      exports: [
        DistributedLockService,
        LockEngine,
        DISTRIBUTED_LOCK_SETTINGS,
        LockTestingControls,
        LOCK_MODULE_ROOT,
      ],
    };
  }
}
