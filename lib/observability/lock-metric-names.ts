/*
 * Every name this package reports under, in one place: OpenTelemetry instruments and span
 * attributes under `distributed_lock.*`, Prometheus metrics under `distributed_lock_*`.
 * docs/OBSERVABILITY.md lists them; a rename here is a breaking change for dashboards.
 */

/** Instrumentation scope (tracer and meter name). */
export const INSTRUMENTATION_SCOPE = 'nestjs-distributed-lock';

/** OpenTelemetry instrument names. */
export const OTEL_METRICS = {
  /** Histogram, seconds: from the call to its outcome, one record per acquisition. */
  waitDuration: 'distributed_lock.wait.duration',
  /** Histogram, seconds: from grant to release or loss, one record per grant. */
  holdDuration: 'distributed_lock.hold.duration',
  /** Counter: acquisitions that got the lock (re-entries included). */
  acquired: 'distributed_lock.acquired',
  /** Counter: acquisitions that gave up because the lock stayed busy (tryAcquire null or timeout). */
  busy: 'distributed_lock.busy',
  /** Counter: held locks found lost (expired, deleted, taken over, renewal failed, closed). */
  lost: 'distributed_lock.lost',
  /** Counter: lease renewals that failed on a Redis error. */
  renewalFailures: 'distributed_lock.renewal.failures',
  /** Observable gauge: locks held now by the instrumented engine. */
  held: 'distributed_lock.held',
} as const;

/** OpenTelemetry span names. */
export const OTEL_SPANS = {
  /** One per acquisition: the wait for the lock, with its outcome. */
  wait: 'distributed_lock.wait',
  /** One per grant: from grant to release or loss. */
  hold: 'distributed_lock.hold',
  /** Event on the hold span when the lock is lost. */
  lostEvent: 'distributed_lock.lost',
} as const;

/** Span and metric attribute names. */
export const LOCK_ATTRIBUTES = {
  kind: 'distributed_lock.kind',
  outcome: 'distributed_lock.outcome',
  attempts: 'distributed_lock.attempts',
  waitMs: 'distributed_lock.wait_ms',
  reentered: 'distributed_lock.reentered',
  fencingToken: 'distributed_lock.fencing_token',
  key: 'distributed_lock.key',
  keyHash: 'distributed_lock.key.hash',
  heldMs: 'distributed_lock.held_ms',
  end: 'distributed_lock.end',
  lostReason: 'distributed_lock.lost.reason',
} as const;

/** Prometheus metric names (prom-client helper). */
export const PROM_METRICS = {
  waitSeconds: 'distributed_lock_wait_seconds',
  holdSeconds: 'distributed_lock_hold_seconds',
  acquired: 'distributed_lock_acquired_total',
  busy: 'distributed_lock_busy_total',
  lost: 'distributed_lock_lost_total',
  renewalFailures: 'distributed_lock_renewal_failures_total',
  held: 'distributed_lock_held',
} as const;

/** Histogram buckets in seconds: 1 ms to 30 s, for waits and holds alike. */
export const LOCK_DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
] as const;
