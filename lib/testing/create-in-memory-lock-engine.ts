import { LockEngine } from '../core/lock-engine';
import type { LockEngineOptions } from '../core/lock-options';
import { resolveEngineOptions } from '../core/validation';
import { attachTestingControls } from './lock-testing-controls';
import { InMemoryLockBackend } from './memory/in-memory-backend';

/** Options of createInMemoryLockEngine(): the engine tuning of LockEngineOptions. */
export type InMemoryLockEngineOptions = LockEngineOptions;

/**
 * Watchdog period in tests when neither `renewEveryMs` nor `watchdogLeaseMs` is given: short, so
 * a lock taken away by loseLock() is noticed (signal aborted) within a few ms instead of 10 s.
 */
export const TESTING_RENEW_EVERY_MS = 50;

/**
 * A real LockEngine on the in-memory backend: one process, no Redis, for tests only. Its fault
 * controls are `LockTestingControls.of(engine)`. Close it like any engine (`await engine.close()`).
 */
export function createInMemoryLockEngine(options: InMemoryLockEngineOptions = {}): LockEngine {
  const withDefaults: LockEngineOptions =
    options.renewEveryMs === undefined && options.watchdogLeaseMs === undefined
      ? { ...options, renewEveryMs: TESTING_RENEW_EVERY_MS }
      : options;
  const backend = new InMemoryLockBackend(resolveEngineOptions(withDefaults));
  const engine = new LockEngine(backend, withDefaults);
  attachTestingControls(engine, backend);
  return engine;
}
