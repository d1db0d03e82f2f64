/*
 * How engine events become waits and holds (no Redis: events emitted by hand), with an OpenTelemetry
 * SDK passed in explicitly rather than registered globally, and the options' validation.
 */
import * as api from '@opentelemetry/api';
import { LockEvents } from '../../lib/core/events/lock-events';
import {
  instrumentLockEvents,
  LOCK_ATTRIBUTES as A,
  OTEL_METRICS,
  OTEL_SPANS,
} from '../../lib/observability';
import { histogramCount, registerTestOtelSdk, sumValue, TestOtelSdk } from '../support/otel-sdk';

let sdk: TestOtelSdk;
let events: LockEvents;
let dispose: () => void;

beforeEach(() => {
  sdk = registerTestOtelSdk({ global: false });
  events = new LockEvents();
  dispose = instrumentLockEvents(events, {
    api,
    tracerProvider: sdk.tracerProvider,
    meterProvider: sdk.meterProvider,
  });
});
afterEach(async () => {
  dispose();
  await sdk.shutdown();
});

const grant = (key: string, fencingToken: number, reentered = false) =>
  events.safeEmit('acquired', { key, kind: 'mutex', waitedMs: 1, attempts: 1, reentered, fencingToken });
const release = (key: string, fencingToken: number, result: 'released' | 'still-held') =>
  events.safeEmit('released', { key, kind: 'mutex', fencingToken, heldMs: 5, result });

describe('lock lifecycle → OpenTelemetry', () => {
  it('ends a re-entered grant at the release of its last hold only', () => {
    grant('a', 7);
    grant('a', 7, true);
    release('a', 7, 'still-held');
    expect(sdk.spans(OTEL_SPANS.hold)).toEqual([]);
    release('a', 7, 'released');
    expect(sdk.spans(OTEL_SPANS.hold)).toHaveLength(1);
  });

  it('tells grants of one key apart by fencing token (semaphore permits, readers)', () => {
    grant('s', 1);
    grant('s', 2);
    release('s', 2, 'released');
    const [ended] = sdk.spans(OTEL_SPANS.hold);
    expect(ended.attributes[A.fencingToken]).toBe(2);
  });

  it('counts a loss of a grant taken before instrumenting, without a hold time', async () => {
    const error = new Error('gone');
    events.safeEmit('lost', {
      key: 'old',
      kind: 'mutex',
      fencingToken: 3,
      heldMs: 9,
      reason: 'deleted',
      error,
    });
    const m = await sdk.collect();
    expect(sumValue(m.get(OTEL_METRICS.lost), { [A.lostReason]: 'deleted' })).toBe(1);
    expect(histogramCount(m.get(OTEL_METRICS.holdDuration))).toBe(0);
  });

  it('counts failed renewals from watchdog rounds', async () => {
    events.safeEmit('renewed', { renewed: 3, lost: 0, failed: 2 });
    events.safeEmit('renewed', { renewed: 5, lost: 0, failed: 0 });
    expect(sumValue((await sdk.collect()).get(OTEL_METRICS.renewalFailures))).toBe(2);
  });

  it('maps notAcquired reasons to outcomes: a single attempt that found it busy is busy, a wait that ran out is timeout', () => {
    for (const [reason, tryOnly, waitMs] of [
      ['timeout', true, 0],
      ['timeout', false, 1_000],
      ['timeout', false, 0],
      ['error', false, 1_000],
      ['closed', false, 1_000],
    ] as const) {
      events.safeEmit('notAcquired', {
        key: 'n',
        kind: 'token',
        waitedMs: 0,
        attempts: 1,
        reason,
        tryOnly,
        waitMs,
      });
    }
    expect(sdk.spans(OTEL_SPANS.wait).map((s) => s.attributes[A.outcome])).toEqual([
      'busy',
      'timeout',
      'busy',
      'error',
      'closed',
    ]);
  });

  it('ends open hold spans as disposed when the instrumentation stops', () => {
    grant('open', 1);
    dispose();
    const [span] = sdk.spans(OTEL_SPANS.hold);
    expect(span.attributes[A.end]).toBe('disposed');
    grant('after', 2);
    expect(sdk.spans(OTEL_SPANS.wait)).toHaveLength(1);
  });
});

describe('instrumentLockEvents options', () => {
  it.each([[{ bogus: true }], [{ key: 'plain' }], [{ heldLocks: 3 }], [{ metricKey: 'x' }]])(
    'refuses %p with a TypeError before listening',
    (options) => {
      const fresh = new LockEvents();
      expect(() => instrumentLockEvents(fresh, options as never)).toThrow(TypeError);
      expect(fresh.listenerCount('acquired')).toBe(0);
    },
  );
});
