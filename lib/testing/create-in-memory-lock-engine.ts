import { LockEngine } from '../core/engine/lock-engine';
import { nodeRuntime } from '../core/runtime/runtime';
import type { LockEngineOptions } from '../core/options/lock-options';
import { resolveEngineOptions } from '../core/options/resolve-engine-options';
import { attachTestingControls, LockTestingControls } from './lock-testing-controls';
import { InMemoryLockBackend } from './memory/in-memory-backend';

/** Options of createInMemoryLockEngine(): the engine tuning of LockEngineOptions, plus `replicaOf`. */
export interface InMemoryLockEngineOptions extends LockEngineOptions {
  /**
   * Another in-memory engine whose store this one shares, as a second replica on the same Redis
   * would (its own owner ids, wake-up hub and watchdog). Default: a store of its own.
   */
  replicaOf?: LockEngine;
}

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
  const { replicaOf, ...engineOptions } = options;
  const withDefaults: LockEngineOptions =
    engineOptions.renewEveryMs === undefined && engineOptions.watchdogLeaseMs === undefined
      ? { ...engineOptions, renewEveryMs: TESTING_RENEW_EVERY_MS }
      : engineOptions;
  const store = replicaOf === undefined ? undefined : LockTestingControls.of(replicaOf).store;
  const resolved = resolveEngineOptions(withDefaults);
  const backend = new InMemoryLockBackend(resolved, store);
  const engine = new LockEngine(backend, resolved, nodeRuntime);
  attachTestingControls(engine, backend);
  return engine;
}
