import type { LockEvents } from '../core/engine/lock-events';
import { assertKeyAttribute, keyAttribute, LockKeyAttribute } from './key-label';
import { LockHoldEnd, LockWait, observeLockLifecycle } from './lock-lifecycle';
import {
  INSTRUMENTATION_SCOPE,
  LOCK_ATTRIBUTES as A,
  LOCK_DURATION_BUCKETS,
  OTEL_METRICS,
  OTEL_SPANS,
} from './lock-metric-names';
import { loadOptionalPeer, OptionalPeerMissingError } from './optional-peer';
import type { OtelApi, OtelAttributes, OtelMeterProvider, OtelSpan, OtelTracerProvider } from './otel-api';

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
  const api = options.api ?? loadOptionalPeer<OtelApi>('@opentelemetry/api');
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
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: [...LOCK_DURATION_BUCKETS] } };
  const waitDuration = meter?.createHistogram(OTEL_METRICS.waitDuration, {
    ...seconds,
    description: 'Time from a lock call to its outcome',
  });
  const holdDuration = meter?.createHistogram(OTEL_METRICS.holdDuration, {
    ...seconds,
    description: 'Time a lock was held, grant to release or loss',
  });
  const acquired = meter?.createCounter(OTEL_METRICS.acquired, {
    description: 'Acquisitions that got the lock',
  });
  const busy = meter?.createCounter(OTEL_METRICS.busy, {
    description: 'Acquisitions that gave up on a busy lock',
  });
  const lost = meter?.createCounter(OTEL_METRICS.lost, { description: 'Held locks found lost' });
  const renewalFailures = meter?.createCounter(OTEL_METRICS.renewalFailures, {
    description: 'Lease renewals that failed on a Redis error',
  });
  const held = meter?.createObservableGauge(OTEL_METRICS.held, { description: 'Locks held now' });

  const metricAttrs = (key: string | undefined, kind: string, extra?: OtelAttributes): OtelAttributes => {
    const attrs: OtelAttributes = { [A.kind]: kind, ...extra };
    const label = key !== undefined ? options.metricKey?.(key) : undefined;
    if (label !== undefined) attrs[A.key] = label;
    return attrs;
  };
  const spanAttrs = (key: string, kind: string): OtelAttributes => {
    const attrs: OtelAttributes = { [A.kind]: kind };
    const pair = keyAttribute(keyMode, key);
    if (pair) attrs[pair[0]] = pair[1];
    return attrs;
  };

  const observer = observeLockLifecycle<OtelSpan | undefined>(events, {
    wait(w: LockWait) {
      const attrs = metricAttrs(w.key, w.kind, { [A.outcome]: w.outcome });
      waitDuration?.record(w.waitedMs / 1000, attrs);
      if (w.outcome === 'acquired') acquired?.add(1, metricAttrs(w.key, w.kind));
      else if (w.outcome === 'busy' || w.outcome === 'timeout') busy?.add(1, metricAttrs(w.key, w.kind));
      if (!tracer) return;
      const now = Date.now();
      const span = tracer.startSpan(
        OTEL_SPANS.wait,
        {
          kind: api.SpanKind.INTERNAL,
          startTime: now - w.waitedMs,
          attributes: {
            ...spanAttrs(w.key, w.kind),
            [A.outcome]: w.outcome,
            [A.attempts]: w.attempts,
            [A.waitMs]: w.waitedMs,
            [A.reentered]: w.reentered,
            ...(w.fencingToken !== undefined && { [A.fencingToken]: w.fencingToken }),
          },
        },
        api.context.active(),
      );
      // A caller that expected the lock and did not get it failed; tryAcquire's null is a normal answer.
      if (w.outcome === 'timeout' || w.outcome === 'error') {
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: `lock not acquired: ${w.outcome}` });
      }
      span.end(now);
    },
    holdStarted(key, kind, fencingToken) {
      return tracer?.startSpan(
        OTEL_SPANS.hold,
        {
          kind: api.SpanKind.INTERNAL,
          attributes: { ...spanAttrs(key, kind), [A.fencingToken]: fencingToken },
        },
        api.context.active(),
      );
    },
    holdEnded(span, kind, end: LockHoldEnd) {
      if (end.end === 'lost') lost?.add(1, metricAttrs(undefined, kind, { [A.lostReason]: end.lostReason }));
      if (end.tracked && end.heldMs !== undefined)
        holdDuration?.record(end.heldMs / 1000, metricAttrs(undefined, kind, { [A.end]: end.end }));
      if (!span) return;
      span.setAttribute(A.end, end.end);
      if (end.heldMs !== undefined) span.setAttribute(A.heldMs, end.heldMs);
      if (end.end === 'lost') {
        span.addEvent(OTEL_SPANS.lostEvent, { [A.lostReason]: end.lostReason });
        span.setStatus({
          code: api.SpanStatusCode.ERROR,
          message: end.error?.message ?? `lock lost: ${end.lostReason}`,
        });
      }
      span.end();
    },
    renewalFailed(count) {
      renewalFailures?.add(count);
    },
  });
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
  for (const name of ['metricKey', 'heldLocks'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new TypeError(`telemetry option "${name}" must be a function`);
    }
  }
}
