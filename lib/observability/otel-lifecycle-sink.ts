import { keyAttribute, LockKeyAttribute, LockKeySecret } from './key-label';
import type { LockHoldEnd, LockLifecycleSink, LockWait } from './lock-lifecycle';
import { LOCK_ATTRIBUTES as A, LOCK_DURATION_BUCKETS, OTEL_METRICS, OTEL_SPANS } from './lock-metric-names';
import type { OtelApi, OtelAttributes, OtelMeter, OtelSpan, OtelTracer } from './otel-api';

/** The `distributed_lock.*` instruments; undefined when metrics are off. */
export type OtelLockInstruments = ReturnType<typeof createOtelInstruments>;

/** Creates the `distributed_lock.*` instruments on `meter` (none without a meter). */
export function createOtelInstruments(meter: OtelMeter | undefined) {
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
  return { waitDuration, holdDuration, acquired, busy, lost, renewalFailures, held };
}

/** What the OpenTelemetry sink reports with. */
export interface OtelSinkSetup {
  api: OtelApi;
  tracer: OtelTracer | undefined;
  instruments: OtelLockInstruments;
  keyMode: LockKeyAttribute;
  keySecret: LockKeySecret | undefined;
  metricKey: ((key: string) => string | undefined) | undefined;
}

/** Reports waits and holds as OpenTelemetry spans and metrics. */
export function otelLifecycleSink(setup: OtelSinkSetup): LockLifecycleSink<OtelSpan | undefined> {
  return {
    wait: (w) => recordWait(setup, w),
    holdStarted: (key, kind, fencingToken) => startHoldSpan(setup, key, kind, fencingToken),
    holdEnded: (span, kind, end) => endHold(setup, span, kind, end),
    renewalFailed(count) {
      setup.instruments.renewalFailures?.add(count);
    },
  };
}

function metricAttrs(
  s: OtelSinkSetup,
  key: string | undefined,
  kind: string,
  extra?: OtelAttributes,
): OtelAttributes {
  const attrs: OtelAttributes = { [A.kind]: kind, ...extra };
  const label = key !== undefined ? s.metricKey?.(key) : undefined;
  if (label !== undefined) attrs[A.key] = label;
  return attrs;
}

function spanAttrs(s: OtelSinkSetup, key: string, kind: string): OtelAttributes {
  const attrs: OtelAttributes = { [A.kind]: kind };
  const pair = keyAttribute(s.keyMode, key, s.keySecret);
  if (pair) attrs[pair[0]] = pair[1];
  return attrs;
}

/** One acquisition's outcome: the wait metrics, and a wait span. */
function recordWait(s: OtelSinkSetup, w: LockWait): void {
  const { api, tracer, instruments: m } = s;
  const attrs = metricAttrs(s, w.key, w.kind, { [A.outcome]: w.outcome });
  m.waitDuration?.record(w.waitedMs / 1000, attrs);
  if (w.outcome === 'acquired') m.acquired?.add(1, metricAttrs(s, w.key, w.kind));
  else if (w.outcome === 'busy' || w.outcome === 'timeout') m.busy?.add(1, metricAttrs(s, w.key, w.kind));
  if (!tracer) return;
  const now = Date.now();
  const span = tracer.startSpan(
    OTEL_SPANS.wait,
    {
      kind: api.SpanKind.INTERNAL,
      startTime: now - w.waitedMs,
      attributes: {
        ...spanAttrs(s, w.key, w.kind),
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
}

/** A new grant: its hold span (none without a tracer). */
function startHoldSpan(s: OtelSinkSetup, key: string, kind: string, fencingToken: number) {
  const { api, tracer } = s;
  return tracer?.startSpan(
    OTEL_SPANS.hold,
    {
      kind: api.SpanKind.INTERNAL,
      attributes: { ...spanAttrs(s, key, kind), [A.fencingToken]: fencingToken },
    },
    api.context.active(),
  );
}

/** A grant ended: the hold and loss metrics, and the end of its hold span. */
function endHold(s: OtelSinkSetup, span: OtelSpan | undefined, kind: string, end: LockHoldEnd): void {
  const { api, instruments: m } = s;
  if (end.end === 'lost') m.lost?.add(1, metricAttrs(s, undefined, kind, { [A.lostReason]: end.lostReason }));
  if (end.tracked && end.heldMs !== undefined)
    m.holdDuration?.record(end.heldMs / 1000, metricAttrs(s, undefined, kind, { [A.end]: end.end }));
  if (!span) return;
  span.setAttribute(A.end, end.end);
  if (end.heldMs !== undefined) span.setAttribute(A.heldMs, end.heldMs);
  if (end.end === 'lost') {
    span.addEvent(OTEL_SPANS.lostEvent, { [A.lostReason]: end.lostReason });
    // The loss's own message names the key: on the span only when raw keys are asked for.
    const message = s.keyMode === 'raw' ? end.error?.message : undefined;
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: message ?? `lock lost: ${end.lostReason}` });
  }
  span.end();
}
