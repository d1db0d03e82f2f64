/*
 * Jest fake timers with the in-memory engine (docs/TESTING.md): leases, waits, watchdog renewals and
 * a scheduled job's minimum hold follow jest.advanceTimersByTimeAsync(), so a test of minutes of
 * lock time runs in milliseconds. (The clock moves in small async steps: every in-memory operation
 * answers on a later turn of the event loop.)
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, LockLostError, LockNotAcquiredError } from '../../lib';
import { createInMemoryLockEngine, DistributedLockTestingModule } from '../../lib/testing';

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

/**
 * Moves the fake clock `ms` forward in steps of at most 50 ms: each in-memory operation answers on
 * a later turn of the event loop, and a step lets those turns run before the next timers fire.
 */
async function advance(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 50) await jest.advanceTimersByTimeAsync(Math.min(50, left));
}

/** Moves the fake clock in 10 ms steps until `promise` settles (at most `maxMs`), and returns its outcome. */
async function settle<T>(promise: Promise<T>, maxMs = 60_000): Promise<T> {
  let outcome: { value: T } | { error: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  for (let waited = 0; !outcome && waited <= maxMs; waited += 10) await jest.advanceTimersByTimeAsync(10);
  if (!outcome) throw new Error(`still pending after ${maxMs} ms of fake time`);
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

describe('the in-memory engine under Jest fake timers', () => {
  it('ends a fixed lease when the clock passes it, and times a wait out at waitMs', async () => {
    const engine = createInMemoryLockEngine();
    const started = performance.now();
    const handle = await settle(engine.acquire('report', { leaseMs: 60_000 }));
    const waiter = engine.acquire('report', { waitMs: 5_000 });
    await expect(settle(waiter)).rejects.toBeInstanceOf(LockNotAcquiredError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(5_000); // fake time: the wait ran its waitMs
    expect(handle.signal.aborted).toBe(false);
    await advance(60_000 - (performance.now() - started));
    expect(handle.signal.aborted).toBe(true);
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    await settle(engine.close());
  });

  it('keeps a watchdog lock renewed however far the clock moves', async () => {
    // The 30 s watchdog lease of production (renewed every 10 s), not the testing default of a renewal
    // every 50 ms: ten minutes then take sixty renewals, not twelve thousand.
    const engine = createInMemoryLockEngine({ watchdogLeaseMs: 30_000 });
    const handle = await settle(engine.acquire('long-job'));
    await advance(10 * 60_000); // ten minutes: sixty renewals of the 30 s lease
    expect(handle.signal.aborted).toBe(false);
    await expect(settle(engine.tryAcquire('long-job'))).resolves.toBeNull();
    await settle(handle.release());
    await settle(engine.close());
  });
});

@Injectable()
class Reports {
  runs = 0;

  @DistributedLock({ key: 'nightly', onBusy: 'skip', minHoldMs: 30_000 })
  async nightly(): Promise<void> {
    this.runs += 1;
  }
}

describe('a Nest testing module under Jest fake timers', () => {
  it("keeps a job's lock for minHoldMs after it ends: a second run skips until the clock passes it", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockTestingModule.forRoot()],
      providers: [Reports],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await settle(app.init());
    const reports = app.get(Reports);

    await settle(reports.nightly());
    await settle(reports.nightly()); // within 30 s of the first grant: skipped
    expect(reports.runs).toBe(1);
    await advance(30_000);
    await settle(reports.nightly());
    expect(reports.runs).toBe(2);
    await settle(reports.nightly()); // the second run's minimum hold: skipped again
    expect(reports.runs).toBe(2);

    await settle(app.close());
  });
});
