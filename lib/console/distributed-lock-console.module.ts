import { type DynamicModule, Module } from '@nestjs/common';
import { ConsoleEvents } from './console-events';
import {
  DISTRIBUTED_LOCK_CONSOLE_OPTIONS,
  resolveConsoleOptions,
  type DistributedLockConsoleOptions,
} from './console-options';
import { consoleControllerFor } from './lock-console.controller';

/**
 * The lock console: a page and a JSON API over the app's DistributedLockService (list, inspect,
 * force release, live events). It is an ordinary Nest controller, so the app's global guards,
 * interceptors and filters protect it — mount it behind your auth (see docs/CONSOLE.md). Import it
 * next to DistributedLockModule.forRoot().
 */
@Module({})
export class DistributedLockConsoleModule {
  /** The console under `path` (default `locks`); force release only with `allowForceRelease: true`. */
  static register(options: DistributedLockConsoleOptions = {}): DynamicModule {
    const resolved = resolveConsoleOptions(options);
    return {
      module: DistributedLockConsoleModule,
      controllers: [consoleControllerFor(resolved)],
      providers: [{ provide: DISTRIBUTED_LOCK_CONSOLE_OPTIONS, useValue: resolved }, ConsoleEvents],
    };
  }
}
