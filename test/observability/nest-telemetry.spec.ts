/*
 * The Nest side of OpenTelemetry: provideLockTelemetry() instruments the module's lock service at
 * init — decorated and manual locks alike — and stops at app.close().
 */
import { Injectable } from '@nestjs/common';
import { SpanStatusCode } from '@opentelemetry/api';
import { DistributedLock, DistributedLockModule, DistributedLockService } from '../../lib';
import { DistributedLockTelemetry, provideLockTelemetry } from '../../lib/nest/telemetry.provider';
import { LOCK_ATTRIBUTES as A, OTEL_METRICS, OTEL_SPANS } from '../../lib/observability';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeApps, startApp, uniquePrefix } from '../support/nest-env';
import { registerTestOtelSdk, sumValue, TestOtelSdk } from '../support/otel-sdk';

@Injectable()
class Orders {
  @DistributedLock({ key: 'order:{0}' })
  async place(id: string): Promise<string> {
    return id;
  }

  /** A job that skips a run while another holds its lock (what @Cron jobs do). */
  @DistributedLock({ key: 'report', onBusy: 'skip' })
  async report(): Promise<string> {
    return 'ran';
  }
}

let server: RedisServerProcess;
let sdk: TestOtelSdk;

beforeAll(async () => {
  server = await startRedis();
});
beforeEach(() => {
  sdk = registerTestOtelSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});
afterAll(async () => {
  await server?.stop();
});

const lockModule = () =>
  DistributedLockModule.forRoot({ redis: server.url, keyPrefix: uniquePrefix('nest-otel') });

describe('provideLockTelemetry', () => {
  it('traces decorated and manual locks of the module, with the live held count, until the app closes', async () => {
    const app = await startApp({ imports: [lockModule()], providers: [Orders, ...provideLockTelemetry()] });
    try {
      await app.get(Orders).place('42');
      const locks = app.get(DistributedLockService);
      const handle = await locks.acquire('manual');
      expect(sumValue((await sdk.collect()).get(OTEL_METRICS.held))).toBe(1);
      await handle.release();
      expect(sdk.spans(OTEL_SPANS.wait).map((s) => s.attributes[A.outcome])).toEqual([
        'acquired',
        'acquired',
      ]);
      expect(sdk.spans(OTEL_SPANS.hold)).toHaveLength(2);
    } finally {
      await closeApps(app);
    }
    expect(app.get(DistributedLockTelemetry)).toBeInstanceOf(DistributedLockTelemetry);
  });

  it('reports a skipped run as a busy wait, not as an error', async () => {
    const app = await startApp({ imports: [lockModule()], providers: [Orders, ...provideLockTelemetry()] });
    try {
      const held = await app.get(DistributedLockService).acquire('report');
      expect(await app.get(Orders).report()).toBeUndefined();
      await held.release();
      const skipped = sdk.spans(OTEL_SPANS.wait)[1]!;
      expect(skipped.attributes[A.outcome]).toBe('busy');
      expect(skipped.status.code).not.toBe(SpanStatusCode.ERROR);
    } finally {
      await closeApps(app);
    }
  });

  it('is switched on by the module option telemetry: true', async () => {
    const app = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: uniquePrefix('nest-otel-option'),
          telemetry: true,
        }),
      ],
    });
    try {
      await (await app.get(DistributedLockService).acquire('by-option')).release();
      expect(sdk.spans(OTEL_SPANS.wait).map((s) => s.attributes[A.outcome])).toEqual(['acquired']);
    } finally {
      await closeApps(app);
    }
  });

  it('takes options through the module option, and provideLockTelemetry(options) wins over it', async () => {
    const optionOnly = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: uniquePrefix('nest-otel-options'),
          telemetry: { key: 'raw', metrics: false },
        }),
      ],
    });
    try {
      await (await optionOnly.get(DistributedLockService).acquire('raw-key')).release();
      expect(sdk.spans(OTEL_SPANS.wait).map((s) => s.attributes[A.key])).toEqual(['raw-key']);
      expect((await sdk.collect()).get(OTEL_METRICS.waitDuration)).toBeUndefined();
    } finally {
      await closeApps(optionOnly);
    }

    const both = await startApp({
      imports: [
        DistributedLockModule.forRoot({
          redis: server.url,
          keyPrefix: uniquePrefix('nest-otel-both'),
          telemetry: { key: 'raw' },
        }),
      ],
      providers: provideLockTelemetry({ key: 'none' }),
    });
    try {
      await (await both.get(DistributedLockService).acquire('hidden-key')).release();
      // One instrumentation (the provider's), not two: one more wait span, without the raw key.
      const spans = sdk.spans(OTEL_SPANS.wait);
      expect(spans).toHaveLength(2);
      expect(spans[1]!.attributes[A.key]).toBeUndefined();
      expect(both.get(DistributedLockService).events.listenerCount('acquired')).toBe(1);
    } finally {
      await closeApps(both);
    }
  });

  it('stays off without a setting', async () => {
    const app = await startApp({ imports: [lockModule()], providers: [DistributedLockTelemetry] });
    try {
      await (await app.get(DistributedLockService).acquire('quiet')).release();
      expect(sdk.spans(OTEL_SPANS.wait)).toEqual([]);
      expect(app.get(DistributedLockService).events.listenerCount('acquired')).toBe(0);
    } finally {
      await closeApps(app);
    }
  });

  it('stops listening when the app closes', async () => {
    const app = await startApp({ imports: [lockModule()], providers: provideLockTelemetry() });
    const events = app.get(DistributedLockService).events;
    expect(events.listenerCount('acquired')).toBe(1);
    await closeApps(app);
    expect(events.listenerCount('acquired')).toBe(0);
  });
});
