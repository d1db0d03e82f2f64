import { CohortBounds, DEFAULT_COHORT_BOUNDS } from './lock-options';
import {
  ENGINE_OPTION_NAMES,
  LockEngineOptions,
  ResolvedEngineOptions,
  DEFAULT_ENGINE_OPTIONS,
  ReplicaAckOptions,
} from './lock-options';
import { leaseDriftMs } from '../runtime/lease-drift';
import { snapshotOptions } from './validation';
import { assertDuration } from './validation';
import { describe } from '../errors/message-text';

// Every check runs before any Redis command, so bad input never costs a round trip or leaves state.

/** Validates engine options and fills in every default. */
export function resolveEngineOptions(given: LockEngineOptions = {}): ResolvedEngineOptions {
  // Read once, own properties only: a getter, Proxy or polluted prototype cannot change a value later.
  const options = snapshotOptions(given, ENGINE_OPTION_NAMES, 'lock engine options') as LockEngineOptions;
  const d = DEFAULT_ENGINE_OPTIONS;
  const keyPrefix = options.keyPrefix ?? d.keyPrefix;
  if (typeof keyPrefix !== 'string')
    throw new TypeError(`keyPrefix must be a string, got ${describe(keyPrefix)}`);
  if (/[{}]/.test(keyPrefix)) {
    throw new TypeError(
      `keyPrefix must not contain "{" or "}": the library places the Cluster hash tag itself`,
    );
  }
  const defaults = snapshotOptions(options.defaults, ['waitMs', 'leaseMs'], 'defaults') as {
    waitMs?: number;
    leaseMs?: number;
  };
  const waitMs = defaults.waitMs ?? d.defaults.waitMs;
  assertDuration(waitMs, 'defaults.waitMs');
  if (defaults.leaseMs !== undefined) assertDuration(defaults.leaseMs, 'defaults.leaseMs', 1);
  const watchdogLeaseMs = options.watchdogLeaseMs ?? d.watchdogLeaseMs;
  assertDuration(watchdogLeaseMs, 'watchdogLeaseMs', 30);
  const renewEveryMs = options.renewEveryMs ?? Math.max(10, Math.floor(watchdogLeaseMs / 3));
  assertDuration(renewEveryMs, 'renewEveryMs', 10);
  if (renewEveryMs >= watchdogLeaseMs) {
    throw new RangeError(
      `renewEveryMs (${renewEveryMs}) must be shorter than watchdogLeaseMs (${watchdogLeaseMs})`,
    );
  }
  assertRenewalWindow(watchdogLeaseMs, renewEveryMs);
  const backoff = snapshotOptions(options.backoff, ['initialMs', 'maxMs'], 'backoff') as {
    initialMs?: number;
    maxMs?: number;
  };
  const initialMs = backoff.initialMs ?? d.backoff.initialMs;
  const maxMs = backoff.maxMs ?? d.backoff.maxMs;
  assertDuration(initialMs, 'backoff.initialMs', 1);
  assertDuration(maxMs, 'backoff.maxMs', 1);
  if (maxMs < initialMs)
    throw new RangeError(`backoff.maxMs (${maxMs}) must be >= backoff.initialMs (${initialMs})`);
  const fenceTtlMs = options.fenceTtlMs ?? d.fenceTtlMs;
  assertDuration(fenceTtlMs, 'fenceTtlMs', 1000);
  const commandTimeoutMs = options.commandTimeoutMs ?? d.commandTimeoutMs;
  assertDuration(commandTimeoutMs, 'commandTimeoutMs', 1);
  const replicas = options.replicas === undefined ? undefined : resolveReplicaAcks(options.replicas);
  const drainMs = options.drainMs ?? d.drainMs;
  assertDuration(drainMs, 'drainMs');
  const cohort = resolveCohort(options.cohort);
  const app = options.app;
  if (app !== undefined && (typeof app !== 'string' || app.length === 0 || app.length > 200)) {
    throw new TypeError(`app must be a non-empty string of at most 200 characters, got ${describe(app)}`);
  }
  const inspection = options.inspection ?? d.inspection;
  if (typeof inspection !== 'boolean') {
    throw new TypeError(`inspection must be a boolean, got ${describe(inspection)}`);
  }
  const maxWaitersPerKey = options.maxWaitersPerKey ?? d.maxWaitersPerKey;
  if (typeof maxWaitersPerKey !== 'number')
    throw new TypeError(`maxWaitersPerKey must be a number, got ${describe(maxWaitersPerKey)}`);
  if (!Number.isInteger(maxWaitersPerKey) || maxWaitersPerKey < 1 || maxWaitersPerKey > 10_000_000) {
    throw new RangeError(
      `maxWaitersPerKey must be a whole number from 1 to 10000000, got ${maxWaitersPerKey}`,
    );
  }
  return {
    keyPrefix,
    defaults: { waitMs, leaseMs: defaults.leaseMs },
    watchdogLeaseMs,
    renewEveryMs,
    backoff: { initialMs, maxMs },
    fenceTtlMs,
    commandTimeoutMs,
    drainMs,
    cohort,
    inspection,
    ...(app !== undefined && { app }),
    maxWaitersPerKey,
    ...(replicas && { replicas }),
  };
}

/** Validates `cohort` and fills in its defaults. */
function resolveCohort(value: unknown): CohortBounds | false {
  if (value === false) return false;
  if (value === undefined || value === true) return DEFAULT_COHORT_BOUNDS;
  const o = snapshotOptions(value, ['passes', 'budgetMs', 'yieldMs', 'fair'], 'cohort options') as {
    passes?: number;
    budgetMs?: number;
    yieldMs?: number;
    fair?: boolean;
  };
  const d = DEFAULT_COHORT_BOUNDS;
  const passes = o.passes ?? d.passes;
  if (typeof passes !== 'number')
    throw new TypeError(`cohort.passes must be a number, got ${describe(passes)}`);
  if (!Number.isInteger(passes) || passes < 0 || passes > 1000) {
    throw new RangeError(`cohort.passes must be a whole number from 0 to 1000, got ${passes}`);
  }
  const budgetMs = o.budgetMs ?? d.budgetMs;
  assertDuration(budgetMs, 'cohort.budgetMs');
  const yieldMs = o.yieldMs ?? d.yieldMs;
  assertDuration(yieldMs, 'cohort.yieldMs');
  const fair = o.fair ?? d.fair;
  if (typeof fair !== 'boolean') throw new TypeError(`cohort.fair must be a boolean, got ${describe(fair)}`);
  return { passes, budgetMs, yieldMs, fair };
}

/** Validates `replicas` (WAIT after each grant) and fills in its defaults. */
function resolveReplicaAcks(value: unknown): Required<ReplicaAckOptions> {
  const o = snapshotOptions(value, ['count', 'timeoutMs', 'policy'], 'replicas options') as ReplicaAckOptions;
  const count = o.count ?? 1;
  if (typeof count !== 'number')
    throw new TypeError(`replicas.count must be a number, got ${describe(count)}`);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    throw new RangeError(`replicas.count must be a whole number from 1 to 1000, got ${count}`);
  }
  const timeoutMs = o.timeoutMs ?? 1000;
  assertDuration(timeoutMs, 'replicas.timeoutMs', 1);
  const policy = o.policy ?? 'report';
  if (policy !== 'report' && policy !== 'require') {
    throw new TypeError(`replicas.policy must be 'report' or 'require', got ${describe(policy)}`);
  }
  return { count, timeoutMs, policy };
}

/**
 * A renewal is sent up to `renewEveryMs` after the last one, and must come back before the lease
 * ends locally (the lease minus its drift allowance). Refuses settings that leave it less than a
 * tenth of the lease (and at least 10 ms) for that round trip: such a renewal races the lease end.
 */
function assertRenewalWindow(watchdogLeaseMs: number, renewEveryMs: number): void {
  const drift = leaseDriftMs(watchdogLeaseMs);
  const window = watchdogLeaseMs - drift - renewEveryMs;
  const needed = Math.max(10, Math.ceil(watchdogLeaseMs / 10));
  if (window < needed) {
    throw new RangeError(
      `renewEveryMs (${renewEveryMs}) leaves a renewal ${window} ms to come back before a watchdog lease of ` +
        `${watchdogLeaseMs} ms ends (drift allowance ${drift} ms); at least ${needed} ms are needed: ` +
        `renew more often or lengthen watchdogLeaseMs`,
    );
  }
}
