import type { FactoryProvider } from '@nestjs/common';
import { LockEngine, openLockEngine } from '../core';
import {
  DISTRIBUTED_LOCK_MODULE_OPTIONS,
  DISTRIBUTED_LOCK_SETTINGS,
} from './distributed-lock.module-definition';
import { DistributedLockSettings, resolveModuleOptions } from './module-options';

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
