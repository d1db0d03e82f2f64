/*
 * The slice of `@opentelemetry/api` (1.x) this package uses, written out structurally so that no
 * emitted declaration file names the optional peer: apps without it still type-check against us,
 * and the real module (or one passed in as `api`) fits these shapes.
 */

/** Attribute values as OpenTelemetry accepts them. */
export type OtelAttributes = Record<string, string | number | boolean | undefined>;

/** A span, as far as this package drives it. */
export interface OtelSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: OtelAttributes, time?: number): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error, time?: number): unknown;
  end(endTime?: number): void;
}

/** An opaque OpenTelemetry context. */
export type OtelContext = object;

/** A tracer. */
export interface OtelTracer {
  startSpan(
    name: string,
    options?: { kind?: number; startTime?: number; attributes?: OtelAttributes },
    context?: OtelContext,
  ): OtelSpan;
}

/** An observable gauge. */
export interface OtelObservableGauge {
  addCallback(cb: (result: { observe(value: number, attributes?: OtelAttributes): void }) => void): void;
  removeCallback(cb: (result: { observe(value: number, attributes?: OtelAttributes): void }) => void): void;
}

/** Options of an instrument. */
export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** A meter. */
export interface OtelMeter {
  createHistogram(
    name: string,
    options?: OtelInstrumentOptions,
  ): { record(value: number, attributes?: OtelAttributes): void };
  createCounter(
    name: string,
    options?: OtelInstrumentOptions,
  ): { add(value: number, attributes?: OtelAttributes): void };
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservableGauge;
}

/** A tracer provider (the global one, or one passed in). */
export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer;
}

/** A meter provider (the global one, or one passed in). */
export interface OtelMeterProvider {
  getMeter(name: string, version?: string): OtelMeter;
}

/** The `@opentelemetry/api` module (`import * as api from '@opentelemetry/api'`). */
export interface OtelApi {
  trace: OtelTracerProvider;
  metrics: OtelMeterProvider;
  context: { active(): OtelContext };
  SpanKind: { INTERNAL: number };
  SpanStatusCode: { ERROR: number };
}
