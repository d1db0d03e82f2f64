// nestjs-distributed-lock/testing: the real lock engine on an in-memory backend, for tests only.
/**
 * The real lock engine on an in-memory backend, with fault controls, for tests (docs/TESTING.md).
 * @module nestjs-distributed-lock/testing
 */
export {
  DistributedLockTestingModule,
  DistributedLockTestingControls,
} from './distributed-lock-testing.module';
export type { DistributedLockTestingModuleOptions } from './distributed-lock-testing.module';
export { createInMemoryLockEngine, TESTING_RENEW_EVERY_MS } from './create-in-memory-lock-engine';
export type { InMemoryLockEngineOptions } from './create-in-memory-lock-engine';
export { LockTestingControls } from './lock-testing-controls';
export type {
  ElsewhereHold,
  ElsewhereKind,
  HoldElsewhereOptions,
  LoseLockOptions,
} from './lock-testing-controls';
