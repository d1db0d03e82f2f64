// Past the core's public surface: resolveLockConfig resolves the module's options once, with the same
// checks and defaults as createLockEngine.
import { describe, resolveLockConfig, type ResolvedLockConfig } from '../core/internal';
import type { DistributedLockModuleOptions, RetryAfterOption } from './interfaces';

/** Default `drainMs` of the Nest module: app.close() waits this long for running critical sections. */
export const DEFAULT_DRAIN_MS = 10_000;

const isPlainObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Default HTTP status of a "busy" answer: 423 Locked (RFC 4918). */
export const DEFAULT_BUSY_STATUS = 423;

/** The module options only the Nest layer reads (everything else goes to the engine). */
export const NEST_OPTION_NAMES = [
  'busyStatus',
  'retryAfter',
  'httpErrors',
  'transportErrors',
  'telemetry',
  'isGlobal',
] as const;

/** The module options, resolved once: the engine's part by core's resolver, the HTTP part here. */
export interface DistributedLockSettings {
  /** Engine tuning and connection, validated, with defaults. */
  readonly config: ResolvedLockConfig;
  /** HTTP status of a "busy" answer. */
  readonly busyStatus: number;
  /** How the `Retry-After` header is chosen. */
  readonly retryAfter: RetryAfterOption;
  /** Whether the module's global interceptor maps lock errors to HTTP answers. */
  readonly httpErrors: boolean;
  /** Whether the module's global interceptor maps lock errors to GraphQL, RPC and WebSocket answers. */
  readonly transportErrors: boolean;
}

/** Validates the module options before anything connects; messages name the option. */
export function resolveModuleOptions(options: unknown): DistributedLockSettings {
  // app.close() lets running critical sections finish: 10 s unless said otherwise.
  // (`drainMs: undefined` means the default too, not the core engine's 0.)
  const withDrain =
    isPlainObject(options) && (options as { drainMs?: unknown }).drainMs === undefined
      ? { ...options, drainMs: DEFAULT_DRAIN_MS }
      : options;
  const config = resolveLockConfig(withDrain, 'DistributedLockModule options', NEST_OPTION_NAMES);
  // `isGlobal` is a ConfigurableModuleBuilder extra: normally stripped before we see it, ignored if not.
  const {
    busyStatus = DEFAULT_BUSY_STATUS,
    retryAfter = true,
    httpErrors = true,
    transportErrors = true,
  } = options as DistributedLockModuleOptions;
  assertBusyStatus(busyStatus);
  assertRetryAfter(retryAfter);
  for (const [name, value] of [
    ['httpErrors', httpErrors],
    ['transportErrors', transportErrors],
  ] as const) {
    if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${describe(value)}`);
  }
  return { config, busyStatus, retryAfter, httpErrors, transportErrors };
}

function assertBusyStatus(status: unknown): asserts status is number {
  if (typeof status !== 'number') {
    throw new TypeError(`busyStatus must be a number, got ${describe(status)}`);
  }
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new RangeError(`busyStatus must be an HTTP error status from 400 to 599, got ${status}`);
  }
}

function assertRetryAfter(value: unknown): asserts value is RetryAfterOption {
  if (typeof value === 'boolean' || typeof value === 'function') return;
  if (typeof value !== 'number') {
    throw new TypeError(
      `retryAfter must be a boolean, a number of seconds or a function, got ${describe(value)}`,
    );
  }
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`retryAfter must be a whole number of seconds >= 0, got ${value}`);
  }
}
