// nestjs-distributed-lock/console: the lock console (a Nest module with a page, a JSON API and SSE).
/**
 * The lock console: a Nest module with a page, a JSON API and live events (docs/CONSOLE.md).
 * @module nestjs-distributed-lock/console
 */
export { DistributedLockConsoleModule } from './distributed-lock-console.module';
export type { DistributedLockConsoleOptions } from './console-options';
export { LOCK_CONSOLE_CONTROLLER } from './lock-console.controller';
export type { ForceReleaseBody } from './lock-console.controller';
export type { ConsoleEventType } from './console-events';
