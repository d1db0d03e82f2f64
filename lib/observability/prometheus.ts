// Past the core's public surface: optional peers are loaded the core's one way (errors/optional-peer.ts),
// a literal require that resolves from where this package is installed.
import type { LockEvents } from '../core/public';
import { LockLifecycleSink, observeLockLifecycle } from './lock-lifecycle';
import { LOCK_DURATION_BUCKETS, PROM_METRICS } from './lock-metric-names';
import { LockEventSource, resolveLockSource } from './lock-source';
import { ifPeerMissing, OptionalPeerMissingError } from '../core/internal';

/** The slice of a prom-client `Registry` used here (structural: no declaration names prom-client). */
export interface PromRegistryLike {
  registerMetric(metric: never): void;
  removeSingleMetric(name: string): void;
}

type Labels = Record<string, string>;
/**
 * The slice of the prom-client module used here. The constructors take `any`: prom-client's own
 * generic config types differ between versions, and an app passes its `import * as client` as is.
 */
export interface PromClientLike {
  Histogram: new (config: any) => { observe(labels: Labels, value: number): void };
  Counter: new (config: any) => {
    inc(labels: Labels, value?: number): void;
    inc(value?: number): void;
  };
  Gauge: new (config: any) => { set(value: number): void };
}

/** Options of {@link registerLockMetrics}. */
export interface LockMetricsOptions {
  /** The prom-client module. Default: loaded on the call (`require('prom-client')`). */
  client?: PromClientLike;
  /** A low-cardinality `key` label (e.g. the key's template). Default none. Never return raw keys. */
  metricKey?: (key: string) => string | undefined;
  /** Histogram buckets in seconds. Default 1 ms … 30 s. */
  buckets?: number[];
}

/**
 * Registers the lock metrics (`distributed_lock_*`, docs/OBSERVABILITY.md) on `registry` — the
 * app's own prom-client Registry; pass `client.register` only if you want the global one — and
 * feeds them from `source`. Returns a disposer that stops listening and unregisters them.
 */
export function registerLockMetrics(
  registry: PromRegistryLike,
  source: LockEvents | LockEventSource,
  options: LockMetricsOptions = {},
): () => void {
  if (!registry || typeof registry.registerMetric !== 'function') {
    throw new TypeError('registerLockMetrics needs a prom-client Registry (new Registry())');
  }
  const { events, heldLocks } = resolveLockSource(source);
  const client = options.client ?? promClient();
  if (!client) throw new OptionalPeerMissingError('prom-client', 'registerLockMetrics', 'options.client');
  const withKey = options.metricKey !== undefined;
  const labels = (names: string[]) => (withKey ? [...names, 'key'] : names);
  const registers = [registry];
  const buckets = options.buckets ?? [...LOCK_DURATION_BUCKETS];
  const created: string[] = [];
  const track = <T>(name: string, metric: T): T => (created.push(name), metric);
  const setup: PromSetup = { client, registers, labels, buckets, track };
  try {
    const metrics = { ...createHistograms(setup), ...createCounters(setup) };
    // prom-client calls collect() on each scrape: the gauge reads the live count then. The gauge and
    // the observer are created below, so collect() reaches them through this holder.
    const live: { observer?: { held: number }; gauge?: { set(value: number): void } } = {};
    const collect = () => live.gauge?.set(heldLocks ? heldLocks() : (live.observer?.held ?? 0));
    live.gauge = track(
      PROM_METRICS.held,
      new client.Gauge({ name: PROM_METRICS.held, help: 'Locks held now', registers, collect }),
    );
    const keyed = (key: string, base: Labels): Labels => {
      const label = options.metricKey?.(key);
      return label === undefined ? base : { ...base, key: label };
    };
    const lifecycle = observeLockLifecycle<string>(events, metricsSink(metrics, keyed));
    live.observer = lifecycle;
    return () => {
      lifecycle.dispose();
      for (const name of created) registry.removeSingleMetric(name);
    };
  } catch (error) {
    // e.g. a name already registered: leave the registry as it was.
    for (const name of created) registry.removeSingleMetric(name);
    throw error;
  }
}

/** What the metric factories share. `track` records each created metric's name, for clean-up. */
interface PromSetup {
  client: PromClientLike;
  registers: PromRegistryLike[];
  labels: (names: string[]) => string[];
  buckets: number[];
  track: <T>(name: string, metric: T) => T;
}
type PromHistogram = InstanceType<PromClientLike['Histogram']>;
type PromCounter = InstanceType<PromClientLike['Counter']>;
interface LockPromMetrics {
  wait: PromHistogram;
  hold: PromHistogram;
  acquired: PromCounter;
  busy: PromCounter;
  lost: PromCounter;
  renewalFailures: PromCounter;
}

/** The wait and hold histograms. */
function createHistograms({ client, registers, labels, buckets, track }: PromSetup) {
  const P = PROM_METRICS;
  const wait = track(
    P.waitSeconds,
    new client.Histogram({
      name: P.waitSeconds,
      help: 'Time from a lock call to its outcome',
      labelNames: labels(['kind', 'outcome']),
      buckets,
      registers,
    }),
  );
  const hold = track(
    P.holdSeconds,
    new client.Histogram({
      name: P.holdSeconds,
      help: 'Time a lock was held, grant to release or loss',
      labelNames: labels(['kind', 'end']),
      buckets,
      registers,
    }),
  );
  return { wait, hold };
}

/** The acquired, busy, lost and renewal-failure counters. */
function createCounters({ client, registers, labels, track }: PromSetup) {
  const P = PROM_METRICS;
  const acquired = track(
    P.acquired,
    new client.Counter({
      name: P.acquired,
      help: 'Acquisitions that got the lock',
      labelNames: labels(['kind']),
      registers,
    }),
  );
  const busy = track(
    P.busy,
    new client.Counter({
      name: P.busy,
      help: 'Acquisitions that gave up on a busy lock',
      labelNames: labels(['kind']),
      registers,
    }),
  );
  const lost = track(
    P.lost,
    new client.Counter({
      name: P.lost,
      help: 'Held locks found lost',
      labelNames: labels(['kind', 'reason']),
      registers,
    }),
  );
  const renewalFailures = track(
    P.renewalFailures,
    new client.Counter({
      name: P.renewalFailures,
      help: 'Lease renewals that failed on a Redis error',
      registers,
    }),
  );
  return { acquired, busy, lost, renewalFailures };
}

/**
 * Feeds the metrics from the lock lifecycle. A hold's state is its key, so that its end (release or
 * loss, where the lifecycle gives no key for a grant it tracks) is labelled like its wait.
 */
function metricsSink(
  m: LockPromMetrics,
  keyed: (key: string, base: Labels) => Labels,
): LockLifecycleSink<string> {
  return {
    wait(w) {
      m.wait.observe(keyed(w.key, { kind: w.kind, outcome: w.outcome }), w.waitedMs / 1000);
      if (w.outcome === 'acquired') m.acquired.inc(keyed(w.key, { kind: w.kind }));
      else if (w.outcome === 'busy' || w.outcome === 'timeout') m.busy.inc(keyed(w.key, { kind: w.kind }));
    },
    holdStarted: (key) => key,
    holdEnded(state, kind, end) {
      const key = state ?? end.key;
      const labelled = (base: Labels) => (key === undefined ? base : keyed(key, base));
      if (end.end === 'lost') m.lost.inc(labelled({ kind, reason: end.lostReason ?? 'unknown' }));
      if (end.tracked && end.heldMs !== undefined) {
        m.hold.observe(labelled({ kind, end: end.end }), end.heldMs / 1000);
      }
    },
    renewalFailed(count) {
      m.renewalFailures.inc(count);
    },
  };
}

/** prom-client, when installed (lib/core/errors/optional-peer.ts). */
function promClient(): PromClientLike | undefined {
  try {
    return require('prom-client') as PromClientLike;
  } catch (error) {
    return ifPeerMissing(error, 'prom-client');
  }
}
