import { metrics, trace } from '@opentelemetry/api';
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
  type MetricData,
  type SumMetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** A metric reader a test collects from by hand (no export interval, no timer). */
class ManualMetricReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** The OpenTelemetry SDK registered globally, as an app would, with in-memory span and metric readers. */
export interface TestOtelSdk {
  /** Finished spans named `name`. */
  spans(name: string): ReadableSpan[];
  /** Collects every metric now, by instrument name. */
  collect(): Promise<Map<string, MetricData>>;
  /** Unregisters the global providers (if registered) and shuts the SDK down. */
  shutdown(): Promise<void>;
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
}

/** Registers an in-memory SDK as the global tracer and meter providers (unless `global` is false). */
export function registerTestOtelSdk({ global = true } = {}): TestOtelSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new ManualMetricReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  if (
    global &&
    (!trace.setGlobalTracerProvider(tracerProvider) || !metrics.setGlobalMeterProvider(meterProvider))
  ) {
    throw new Error('an OpenTelemetry provider was already registered globally');
  }
  return {
    tracerProvider,
    meterProvider,
    spans: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw errors[0];
      const byName = new Map<string, MetricData>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
      }
      return byName;
    },
    async shutdown() {
      if (global) {
        trace.disable();
        metrics.disable();
      }
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** Sum of histogram counts (optionally only data points whose attributes include `where`). */
export function histogramCount(metric: MetricData | undefined, where: Record<string, unknown> = {}): number {
  if (!metric) return 0;
  if (metric.dataPointType !== DataPointType.HISTOGRAM)
    throw new Error(`${metric.descriptor.name} is no histogram`);
  return (metric as HistogramMetricData).dataPoints
    .filter((p) => matches(p.attributes, where))
    .reduce((sum, p) => sum + p.value.count, 0);
}

/** Sum of a counter's (or gauge's) values (optionally only data points whose attributes include `where`). */
export function sumValue(metric: MetricData | undefined, where: Record<string, unknown> = {}): number {
  if (!metric) return 0;
  if (metric.dataPointType === DataPointType.HISTOGRAM)
    throw new Error(`${metric.descriptor.name} is a histogram`);
  return (metric as SumMetricData).dataPoints
    .filter((p) => matches(p.attributes, where))
    .reduce((sum, p) => sum + p.value, 0);
}

function matches(attributes: Record<string, unknown>, where: Record<string, unknown>): boolean {
  return Object.entries(where).every(([k, v]) => attributes[k] === v);
}
