import Redis from 'ioredis';
import { LockLostError, LockNotAcquiredError, LockRedisError } from '../../lib/core/errors';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { createLockEngine } from '../../lib/core/topology/create-lock-engine';
import { createInMemoryLockEngine, LockTestingControls } from '../../lib/testing';
import { nextEvent, whenAborted } from '../support/lock-env';

// The fault controls of the in-memory engine, on a plain LockEngine (no Nest, no Redis).
let engines: LockEngine[] = [];
function engine(options: Parameters<typeof createInMemoryLockEngine>[0] = {}): {
  engine: LockEngine;
  controls: LockTestingControls;
} {
  const e = createInMemoryLockEngine(options);
  engines.push(e);
  return { engine: e, controls: LockTestingControls.of(e) };
}

afterEach(async () => {
  const closing = engines;
  engines = [];
  await Promise.all(closing.map((e) => e.close()));
});

describe('holdElsewhere()', () => {
  it('makes the key busy as another replica would, until releaseElsewhere()', async () => {
    const { engine: e, controls } = engine();
    const other = await controls.holdElsewhere('order:1');
    expect(controls.isLocked('order:1')).toBe(true);
    expect(await e.tryAcquire('order:1')).toBeNull();
    const err = await e.acquire('order:1', { waitMs: 20 }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(LockNotAcquiredError);
    expect((err as LockNotAcquiredError).retryAfterMs).toBeGreaterThan(0);

    const queued = nextEvent(e, 'contended', (ev) => ev.key === 'order:1');
    const waiting = e.acquire('order:1', { waitMs: 20_000 });
    await queued;
    expect(await controls.releaseElsewhere('order:1')).toBe(true);
    const mine = await waiting;
    expect(mine.fencingToken).toBeGreaterThan(other.fencingToken);
    await mine.release();
    expect(await controls.releaseElsewhere('order:1')).toBe(false);
  });

  it('ends the hold by itself after forMs, like a lease', async () => {
    const { engine: e, controls } = engine();
    // 1 s, not less: the key must still be busy at the next line on a loaded parallel run (50 ms was not).
    const other = await controls.holdElsewhere('job', { forMs: 1_000 });
    expect(await e.tryAcquire('job')).toBeNull();
    const mine = await e.acquire('job', { waitMs: 20_000 });
    expect(mine.fencingToken).toBeGreaterThan(other.fencingToken);
    await mine.release();
  });

  it('takes the kind asked for: a read hold lets readers in and keeps writers out', async () => {
    const { engine: e, controls } = engine();
    await controls.holdElsewhere('doc', { kind: 'read' });
    const reader = await e.acquire('doc', { mode: 'read', waitMs: 0 });
    await reader.release();
    expect(await e.tryAcquire('doc', { mode: 'write' })).toBeNull();
    await controls.holdElsewhere('pool', { kind: 'semaphore', limit: 2 });
    const permit = await e.acquire('pool', { limit: 2, waitMs: 0 });
    expect(await e.tryAcquire('pool', { limit: 2 })).toBeNull();
    await permit.release();
  });

  it('takes write and fair holds too: a write hold keeps readers out, a fair hold keeps fair callers out until released', async () => {
    const { engine: e, controls } = engine();
    const writer = await controls.holdElsewhere('doc-w', { kind: 'write' });
    expect(await e.tryAcquire('doc-w', { mode: 'read' })).toBeNull();
    expect(await writer.release()).toBe(true);
    const reader = await e.acquire('doc-w', { mode: 'read', waitMs: 0 });
    expect(reader.fencingToken).toBeGreaterThan(writer.fencingToken);
    await reader.release();

    const fair = await controls.holdElsewhere('queue', { kind: 'fair' });
    expect(await e.tryAcquire('queue', { fair: true })).toBeNull();
    const waiting = e.acquire('queue', { fair: true, waitMs: 20_000 });
    expect(await fair.release()).toBe(true);
    const mine = await waiting;
    expect(mine.fencingToken).toBeGreaterThan(fair.fencingToken);
    await mine.release();
  });

  it('rejects when the key is already held', async () => {
    const { engine: e, controls } = engine();
    const mine = await e.acquire('taken');
    await expect(controls.holdElsewhere('taken')).rejects.toThrow(/already held/);
    await expect(controls.holdElsewhere('taken', { kind: 'token' })).rejects.toThrow(/already held/);
    await mine.release();
  });
});

describe('loseLock()', () => {
  it('aborts a watchdog holder’s signal at its next renewal (deleted)', async () => {
    const { engine: e, controls } = engine();
    const h = await e.acquire('report');
    expect(controls.loseLock('report')).toBe(1);
    const reason = await whenAborted(h.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('deleted');
    expect(await h.release()).toBe(false);
  });

  it('reports a takeover by another owner as taken-over', async () => {
    const { engine: e, controls } = engine();
    const h = await e.acquire('report', { fair: true });
    controls.loseLock('report', { takeOver: true });
    expect(((await whenAborted(h.signal)) as LockLostError).reason).toBe('taken-over');
    expect(await e.tryAcquire('report', { fair: true })).toBeNull();
  });

  it('lets a fixed-lease holder learn it at release(), as with Redis', async () => {
    const { engine: e, controls } = engine();
    const h = await e.acquire('fixed', { leaseMs: 60_000 });
    controls.loseLock('fixed');
    expect(h.signal.aborted).toBe(false);
    expect(await h.release()).toBe(false);
    expect(((await whenAborted(h.signal)) as LockLostError).reason).toBe('expired');
  });

  it('takes shared holders away too (read-write and semaphore)', async () => {
    const { engine: e, controls } = engine();
    const r = await e.acquire('rw', { mode: 'read' });
    const p = await e.acquire('sem', { limit: 3 });
    expect(controls.loseLock('rw') + controls.loseLock('sem')).toBe(2);
    expect(((await whenAborted(r.signal)) as LockLostError).reason).toBe('deleted');
    expect(((await whenAborted(p.signal)) as LockLostError).reason).toBe('deleted');
    expect(controls.loseLock('nothing-here')).toBe(0);
  });
});

describe('failBackend() / recoverBackend()', () => {
  it('rejects every call with LockRedisError (cause kept) until recovered', async () => {
    const { engine: e, controls } = engine();
    const outage = new Error('connection refused');
    controls.failBackend(outage);
    const err = await e.acquire('k', { waitMs: 1_000 }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(LockRedisError);
    expect((err as LockRedisError).cause).toBe(outage);
    await expect(e.tryAcquire('k')).rejects.toBeInstanceOf(LockRedisError);
    controls.recoverBackend();
    const h = await e.acquire('k', { waitMs: 0 });
    expect(await h.release()).toBe(true);
  });

  it('fails a held lock’s renewal (signal aborted) and never throws from release()', async () => {
    const { engine: e, controls } = engine();
    const h = await e.acquire('held');
    controls.failBackend();
    const reason = (await whenAborted(h.signal)) as LockLostError;
    expect(reason.reason).toBe('renewal-failed');
    expect(reason.cause).toBeInstanceOf(LockRedisError);
    await expect(h.release()).resolves.toBe(false);
    controls.recoverBackend();
  });
});

describe('createInMemoryLockEngine()', () => {
  it('shares one store between replicas built with replicaOf', async () => {
    const { engine: a } = engine();
    const { engine: b } = engine({ replicaOf: a });
    const h = await a.acquire('shared');
    expect(await b.tryAcquire('shared')).toBeNull();
    await h.release();
    const other = await b.acquire('shared', { waitMs: 0 });
    expect(other.fencingToken).toBeGreaterThan(h.fencingToken);
    await other.release();
  });

  it('refuses controls for an engine it did not build', async () => {
    const client = new Redis({ lazyConnect: true }); // never connects
    const real = createLockEngine({ redis: client });
    try {
      expect(() => LockTestingControls.of(real)).toThrow(TypeError);
    } finally {
      await real.close();
      client.disconnect();
    }
  });

  it('leaves nothing behind after close: no held locks, waiters or channels', async () => {
    const { engine: e, controls } = engine();
    await e.acquire('left-open');
    await controls.holdElsewhere('busy');
    const waiting = e.acquire('busy', { waitMs: 20_000 }).catch((x: unknown) => x);
    await nextEvent(e, 'contended');
    await e.close();
    expect(await waiting).toBeInstanceOf(LockNotAcquiredError);
    expect(e.stats()).toEqual({ held: 0, watchdog: 0, waitingLocks: 0, channels: 0, closed: true });
    expect(controls.isLocked('left-open')).toBe(false);
  });
});
