/*
 * OpenTelemetry against real Redis, with the SDK registered globally as an app would: one wait span
 * per acquisition with its outcome, a hold span per grant ending in release or loss, and the
 * distributed_lock.* instruments whose counts match the calls made.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { LockNotAcquiredError } from '../../lib/core/errors';
import {
  hashKey,
  instrumentLockEvents,
  LOCK_ATTRIBUTES as A,
  OTEL_METRICS,
  OTEL_SPANS,
} from '../../lib/observability';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { histogramCount, registerTestOtelSdk, sumValue, TestOtelSdk } from '../support/otel-sdk';

const env = useLockEnv();
let sdk: TestOtelSdk;

beforeEach(() => {
  sdk = registerTestOtelSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

const outcomes = (spans: ReturnType<TestOtelSdk['spans']>) => spans.map((s) => s.attributes[A.outcome]);

describe('instrumentLockEvents', () => {
  it('records one wait span per acquisition with its outcome, and the instruments agree', async () => {
    const engine = env.engine({ keyPrefix: 'otel:' });
    const dispose = instrumentLockEvents(engine.events);
    const key = uniqueKey('otel');

    const held = await engine.acquire(key); // acquired
    await expect(engine.tryAcquire(key)).resolves.toBeNull(); // busy
    await expect(engine.acquire(key, { waitMs: 30 })).rejects.toBeInstanceOf(LockNotAcquiredError); // timeout
    const aborter = new AbortController();
    const aborted = engine.acquire(key, { waitMs: 60_000, signal: aborter.signal });
    aborter.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up'); // aborted
    await engine.runInLock(held, async () => (await engine.acquire(key)).release()); // re-entered
    await held.release();

    const waits = sdk.spans(OTEL_SPANS.wait);
    expect(outcomes(waits)).toEqual(['acquired', 'busy', 'timeout', 'aborted', 'acquired']);
    expect(waits.map((s) => s.attributes[A.reentered])).toEqual([false, false, false, false, true]);
    expect(waits.map((s) => s.status.code)).toEqual([
      SpanStatusCode.UNSET,
      SpanStatusCode.UNSET, // tryAcquire's null is an answer, not a failure
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
      SpanStatusCode.UNSET,
    ]);
    for (const span of waits) {
      expect(span.attributes).toMatchObject({ [A.kind]: 'mutex', [A.keyHash]: hashKey(key) });
      expect(span.attributes[A.attempts]).toEqual(expect.any(Number));
      expect(span.attributes[A.waitMs]).toEqual(expect.any(Number));
      // The raw key is not on spans by default.
      expect(Object.values(span.attributes)).not.toContain(key);
    }
    expect(waits[0].attributes[A.fencingToken]).toBe(held.fencingToken);

    const holds = sdk.spans(OTEL_SPANS.hold);
    expect(holds).toHaveLength(1); // the re-entry is a hold on the same grant, not a new one
    expect(holds[0].attributes).toMatchObject({ [A.end]: 'released', [A.fencingToken]: held.fencingToken });

    const m = await sdk.collect();
    expect(histogramCount(m.get(OTEL_METRICS.waitDuration))).toBe(5);
    expect(histogramCount(m.get(OTEL_METRICS.waitDuration), { [A.outcome]: 'acquired' })).toBe(2);
    expect(m.get(OTEL_METRICS.waitDuration)?.descriptor.unit).toBe('s');
    expect(histogramCount(m.get(OTEL_METRICS.holdDuration))).toBe(1);
    expect(sumValue(m.get(OTEL_METRICS.acquired))).toBe(2);
    expect(sumValue(m.get(OTEL_METRICS.busy))).toBe(2); // busy + timeout
    expect(sumValue(m.get(OTEL_METRICS.lost))).toBe(0);
    expect(sumValue(m.get(OTEL_METRICS.held))).toBe(0);

    dispose();
    await (await engine.acquire(key)).release();
    expect(sdk.spans(OTEL_SPANS.wait)).toHaveLength(5); // nothing after dispose
  });

  it('ends the hold span of a lost lock with a lost event, an error status and the lost counter', async () => {
    const engine = env.engine({ keyPrefix: 'otel:' });
    const dispose = instrumentLockEvents(engine.events);
    // 1 s: the lock must still be held when the gauge is collected on the next line, on a loaded run too.
    const handle = await engine.acquire(uniqueKey('lease'), { leaseMs: 1_000 });
    const gauge = await sdk.collect();
    expect(sumValue(gauge.get(OTEL_METRICS.held))).toBe(1);

    await whenAborted(handle.signal); // the fixed lease ran out
    await handle.release(); // after the loss: must not end the hold a second time

    const [hold] = sdk.spans(OTEL_SPANS.hold);
    expect(hold.attributes[A.end]).toBe('lost');
    expect(hold.status.code).toBe(SpanStatusCode.ERROR);
    expect(hold.events.map((e) => [e.name, e.attributes?.[A.lostReason]])).toEqual([
      [OTEL_SPANS.lostEvent, 'expired'],
    ]);
    const m = await sdk.collect();
    expect(sumValue(m.get(OTEL_METRICS.lost), { [A.lostReason]: 'expired' })).toBe(1);
    expect(histogramCount(m.get(OTEL_METRICS.holdDuration), { [A.end]: 'lost' })).toBe(1);
    expect(sumValue(m.get(OTEL_METRICS.held))).toBe(0);
    dispose();
  });

  it('puts the raw key on spans only when asked, and a label of the key on metrics only when given', async () => {
    const engine = env.engine({ keyPrefix: 'otel:' });
    const key = uniqueKey('raw');
    const dispose = instrumentLockEvents(engine.events, { key: 'raw', metricKey: () => 'raw:{0}' });
    await (await engine.acquire(key)).release();
    dispose();
    const [wait] = sdk.spans(OTEL_SPANS.wait);
    expect(wait.attributes[A.key]).toBe(key);
    expect(wait.attributes[A.keyHash]).toBeUndefined();
    const m = await sdk.collect();
    expect(histogramCount(m.get(OTEL_METRICS.waitDuration), { [A.key]: 'raw:{0}' })).toBe(1);
  });
  it.each([
    ["key: 'none'", { key: 'none' as const }, undefined],
    ['key: a function', { key: (k: string) => `label:${k.length}` }, 'label'],
  ])('with %s, no raw key and no hash reach the spans', async (_label, options, expected) => {
    const engine = env.engine({ keyPrefix: 'otel:' });
    const key = uniqueKey('hidden');
    const dispose = instrumentLockEvents(engine.events, options);
    await (await engine.acquire(key)).release();
    dispose();
    const [wait] = sdk.spans(OTEL_SPANS.wait);
    expect(wait.attributes[A.keyHash]).toBeUndefined();
    if (expected === undefined) expect(wait.attributes[A.key]).toBeUndefined();
    else expect(wait.attributes[A.key]).toBe(`${expected}:${key.length}`);
  });

  it('records only metrics with traces: false, and only spans with metrics: false', async () => {
    const engine = env.engine({ keyPrefix: 'otel:' });
    const noTraces = instrumentLockEvents(engine.events, { traces: false });
    await (await engine.acquire(uniqueKey('metrics-only'))).release();
    noTraces();
    expect(sdk.spans(OTEL_SPANS.wait)).toHaveLength(0);
    expect(histogramCount((await sdk.collect()).get(OTEL_METRICS.waitDuration))).toBe(1);

    const noMetrics = instrumentLockEvents(engine.events, { metrics: false });
    await (await engine.acquire(uniqueKey('spans-only'))).release();
    noMetrics();
    expect(sdk.spans(OTEL_SPANS.wait)).toHaveLength(1);
    expect(histogramCount((await sdk.collect()).get(OTEL_METRICS.waitDuration))).toBe(1);
  });
});
