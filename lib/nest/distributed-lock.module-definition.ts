import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { DistributedLockModuleOptions } from './interfaces';

// Kept apart from the module file so that providers can import the options token without an import cycle.

/**
 * forRoot / forRootAsync (useFactory, useClass, useExisting) plus the `isGlobal` extra: global unless
 * `isGlobal: false` (as every peer module; before issue 25 the default was false).
 */
export const {
  ConfigurableModuleClass: DistributedLockConfigurableModule,
  MODULE_OPTIONS_TOKEN: DISTRIBUTED_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: DISTRIBUTED_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<DistributedLockModuleOptions>({ moduleName: 'DistributedLock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createDistributedLockOptions')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** Token of the module options resolved once (DistributedLockSettings). */
export const DISTRIBUTED_LOCK_SETTINGS = Symbol('DistributedLockSettings');

/** The options of forRoot(), with the `isGlobal` extra. */
export type DistributedLockModuleRootOptions = typeof DISTRIBUTED_LOCK_OPTIONS_TYPE;
/** The options of forRootAsync(), with the `isGlobal` extra. */
export type DistributedLockModuleAsyncOptions = typeof DISTRIBUTED_LOCK_ASYNC_OPTIONS_TYPE;
