// Past the core's public surface: optional peers are loaded the core's one way (errors/optional-peer.ts),
// a literal require that resolves from where this package is installed.
import type { LockEvents } from '../core/public';
import { assertKeyAttribute, assertKeySecret, LockKeyAttribute, LockKeySecret } from './key-label';
import { observeLockLifecycle } from './lock-lifecycle';
import { INSTRUMENTATION_SCOPE } from './lock-metric-names';
import { ifPeerMissing, OptionalPeerMissingError } from '../core/internal';
import type { OtelApi, OtelAttributes, OtelMeterProvider, OtelSpan, OtelTracerProvider } from './otel-api';
import { createOtelInstruments, otelLifecycleSink } from './otel-lifecycle-sink';

/** Options of {@link instrumentLockEvents}; every one optional. */
export interface LockTelemetryOptions {
  /** The `@opentelemetry/api` module (`import * as api from '@opentelemetry/api'`). Default: loaded on the call. */
  api?: OtelApi;
  /** Where spans go. Default: the global tracer provider (`api.trace`). */
  tracerProvider?: OtelTracerProvider;
  /** Where metrics go. Default: the global meter provider (`api.metrics`), read once, on this call. */
  meterProvider?: OtelMeterProvider;
  /** Record spans (a wait span per acquisition, a hold span per grant). Default true. */
  traces?: boolean;
  /** Record metrics. Default true. */
  metrics?: boolean;
  /** The key on spans (see LockKeyAttribute). Default `'hash'`. */
  key?: LockKeyAttribute;
  /**
   * The secret of `key: 'hash'` (at least 16 characters or bytes): the same on every replica to
   * correlate a key's spans across them. Default: a random secret per process.
   */
  keySecret?: LockKeySecret;
  /**
   * A low-cardinality label for the key on metrics (`distributed_lock.key`), e.g. its template.
   * Default none: metrics carry only kind and outcome. Never pass a function returning raw keys.
   */
  metricKey?: (key: string) => string | undefined;
  /** What the held-locks gauge reports. Default: grants taken since instrumenting and still held. */
  heldLocks?: () => number;
}

const OPTION_NAMES = new Set<string>([
  'api',
  'tracerProvider',
  'meterProvider',
  'traces',
  'metrics',
  'key',
  'keySecret',
  'metricKey',
  'heldLocks',
]);

/** Stops the instrumentation: listeners off, gauge callback removed, open hold spans ended. */
export type LockTelemetryDisposer = () => void;

/**
 * Reports a lock engine's lifecycle to OpenTelemetry: spans `distributed_lock.wait` and
 * `distributed_lock.hold`, the `distributed_lock.*` instruments (docs/OBSERVABILITY.md). Plain
 * Node: pass `engine.events` or `service.events`. A no-op in effect when the app registered no
 * OpenTelemetry SDK. Throws OptionalPeerMissingError when `@opentelemetry/api` is neither
 * installed nor passed as `api`.
 */
export function instrumentLockEvents(
  events: LockEvents,
  options: LockTelemetryOptions = {},
): LockTelemetryDisposer {
  validate(options);
  const api = options.api ?? otelApi();
  if (!api) throw new OptionalPeerMissingError('@opentelemetry/api', 'instrumentLockEvents', 'options.api');
  const keyMode = options.key ?? 'hash';
  const tracer =
    options.traces === false
      ? undefined
      : (options.tracerProvider ?? api.trace).getTracer(INSTRUMENTATION_SCOPE);
  const meter =
    options.metrics === false
      ? undefined
      : (options.meterProvider ?? api.metrics).getMeter(INSTRUMENTATION_SCOPE);
  const instruments = createOtelInstruments(meter);
  const observer = observeLockLifecycle<OtelSpan | undefined>(
    events,
    otelLifecycleSink({
      api,
      tracer,
      instruments,
      keyMode,
      keySecret: options.keySecret,
      metricKey: (key) => options.metricKey?.(key),
    }),
  );
  const held = instruments.held;
  const observeHeld = (result: { observe(value: number, attributes?: OtelAttributes): void }) =>
    result.observe(options.heldLocks ? options.heldLocks() : observer.held);
  held?.addCallback(observeHeld);
  return () => {
    held?.removeCallback(observeHeld);
    observer.dispose();
  };
}

function validate(options: LockTelemetryOptions): void {
  if (options === null || typeof options !== 'object')
    throw new TypeError('telemetry options must be an object');
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) throw new TypeError(`Unknown telemetry option "${name}"`);
  }
  if (options.key !== undefined) assertKeyAttribute(options.key, 'telemetry option "key"');
  if (options.keySecret !== undefined) assertKeySecret(options.keySecret, 'telemetry option "keySecret"');
  for (const name of ['metricKey', 'heldLocks'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new TypeError(`telemetry option "${name}" must be a function`);
    }
  }
}

/** @opentelemetry/api, when installed (lib/core/errors/optional-peer.ts). */
function otelApi(): OtelApi | undefined {
  try {
    return require('@opentelemetry/api') as OtelApi;
  } catch (error) {
    return ifPeerMissing(error, '@opentelemetry/api');
  }
}
