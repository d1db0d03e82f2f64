// Past the core's public surface: openLockEngine builds the engine from the options resolved once,
// which createLockEngine would resolve again.
import type { FactoryProvider, Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { LockEngine } from '../core';
import { openLockEngine } from '../core/internal';
import {
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_SETTINGS,
} from './distributed-lock.module-definition';
import { DistributedLockService } from './distributed-lock.service';
import { LockServiceBinder } from './lock-service-binder';
import { ModuleLockErrorsInterceptor } from './module-errors.interceptor';
import { DistributedLockSettings, resolveModuleOptions } from './module-options';
import { SkipRouteCheck } from './skip-route.check';
import { DistributedLockTelemetry } from './telemetry.provider';

/** The module options resolved once (validated before anything connects). */
export const settingsProvider: FactoryProvider<DistributedLockSettings> = {
  provide: DISTRIBUTED_LOCK_SETTINGS,
  useFactory: resolveModuleOptions,
  inject: [DISTRIBUTED_LOCK_MODULE_OPTIONS],
};

/**
 * The engine, built by one factory from the resolved options. Connections it opens connect on
 * first use, so a start-up that fails later leaves no socket behind; the service closes it.
 */
export const engineProvider: FactoryProvider<LockEngine> = {
  provide: LockEngine,
  useFactory: (settings: DistributedLockSettings) => openLockEngine(settings.config),
  inject: [DISTRIBUTED_LOCK_SETTINGS],
};

/**
 * The Nest layer around whatever engine the LockEngine token holds: the service, the binder the
 * decorator finds it through, the start-up check of skip routes, telemetry and the global
 * interceptor (HTTP and transport answers in one layer). DistributedLockModule adds the settings and the engine built from them; the testing
 * module adds the same settings and the real engine over an in-memory backend.
 */
export const nestLayerProviders: Provider[] = [
  SkipRouteCheck,
  LockServiceBinder,
  DistributedLockTelemetry,
  DistributedLockService,
  { provide: APP_INTERCEPTOR, useClass: ModuleLockErrorsInterceptor },
];
