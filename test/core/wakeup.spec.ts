/*
 * Waiters are woken by the release (pub/sub, or a local notify within one process), not by
 * polling: the backoff is set to 60 s, far longer than these tests may run, and every waiter still
 * gets the lock after the release with no more Redis attempts than wake-ups explain.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockHandle } from '../../lib/core/grant/grant-handle';
import { spawnWorker, workerPath, WorkerProcess } from '../support/spawn-worker';
import { EventPayload, LockEnv, nextEvent, track, uniqueKey, useLockEnv } from '../support/lock-env';

const WORKER = workerPath('holder-worker.ts');
const PREFIX = 'wake:';
/** Polling can never be what wakes a waiter here: the first poll would come after a minute. */
const NO_POLLING = { keyPrefix: PREFIX, backoff: { initialMs: 60_000, maxMs: 60_000 } };
/**
 * Holders keep a long watchdog lease: a waiter also sleeps at most until the holder's lease would
 * end (its PTTL), and that must not be what wakes it either.
 */
const LONG_LEASE = { ...NO_POLLING, watchdogLeaseMs: 600_000 };
// Longer than any test below may run, so that only a wake-up can end a wait in time.
const WAIT = { waitMs: 600_000 };

const keys = new KeySpace(PREFIX);
const workers: WorkerProcess[] = [];

// Registered first, so the workers stop before the env's own afterEach closes the engines.
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
const env = useLockEnv();

function startWorker(): WorkerProcess {
  const worker = spawnWorker(WORKER, {
    env: { REDIS_URL: env.url, ENGINE_OPTIONS: JSON.stringify(NO_POLLING) },
  });
  workers.push(worker);
  return worker;
}

/** Collects the `acquired` events of one engine for one key. */
function acquiredEvents(engine: ReturnType<LockEnv['engine']>, key: string): EventPayload<'acquired'>[] {
  const seen: EventPayload<'acquired'>[] = [];
  engine.events.on('acquired', (e) => {
    if (e.key === key) seen.push(e);
  });
  return seen;
}

describe('wake-up on release', () => {
  it('wakes a waiter of another engine when the holder releases, with one attempt after the release', async () => {
    const holderEngine = env.engine(LONG_LEASE);
    const waiterEngine = env.engine(LONG_LEASE);
    const key = uniqueKey('one-waiter');
    const events = acquiredEvents(waiterEngine, key);
    const holder = await holderEngine.acquire(key);

    // The waiter tries, subscribes, tries once more (a release may fall in between), then sleeps.
    let contended = 0;
    waiterEngine.events.on('contended', (e) => {
      if (e.key === key) contended++;
    });
    const secondBusy = nextEvent(waiterEngine, 'contended', () => contended === 2);
    const waiter = track(waiterEngine.acquire(key, WAIT));
    await secondBusy;
    expect(waiter.settled).toBe(false);

    await holder.release();
    const handle = await waiter.result;
    expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(events).toHaveLength(1);
    expect(events[0]!.attempts).toBe(3); // 2 before the release, exactly 1 after it
    expect(contended).toBe(2);
    await handle.release();
  });

  it('hands the lock down a local queue of waiters, each woken by its predecessor release', async () => {
    const holderEngine = env.engine(LONG_LEASE);
    const waiterEngine = env.engine(LONG_LEASE);
    const key = uniqueKey('queue');
    const events = acquiredEvents(waiterEngine, key);
    const holder = await holderEngine.acquire(key);
    let contended = 0;
    waiterEngine.events.on('contended', (e) => {
      if (e.key === key) contended++;
    });
    const headBusy = nextEvent(waiterEngine, 'contended', () => contended === 2);
    const order: number[] = [];
    const waiters = Array.from({ length: 5 }, (_, i) =>
      waiterEngine.using(key, WAIT, async (lock) => {
        order.push(i);
        return lock.fencingToken;
      }),
    );
    await headBusy;
    await holder.release();
    const tokens = await Promise.all(waiters);

    expect(order).toEqual([0, 1, 2, 3, 4]); // local FIFO
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    // Only the head asked Redis while the lock was held elsewhere (2 attempts, then 1 after the
    // release); every later waiter was woken by its predecessor's release and won at its first try
    // (or one more, after a wake-up left over from an earlier release).
    expect(events.map((e) => e.attempts)[0]).toBe(3);
    for (const e of events.slice(1)) expect(e.attempts).toBeLessThanOrEqual(2);
  });

  it('wakes a waiter in another OS process when the holder releases', async () => {
    const holderEngine = env.engine(LONG_LEASE);
    const key = uniqueKey('cross-process');
    const worker = startWorker();
    await worker.waitForMessage((m) => m.type === 'ready', 90_000);

    const holder = await holderEngine.acquire(key);
    worker.send({ type: 'acquire', id: 'w1', key, options: WAIT });
    await worker.waitForMessage((m) => m.type === 'contended' && m.key === key, 30_000);
    await worker.waitForMessage((m) => m.type === 'contended' && m.key === key, 30_000);
    expect(worker.messages.some((m) => m.type === 'granted' || m.type === 'failed')).toBe(false);

    await holder.release();
    const got = await worker.waitForMessage(
      (m) => m.id === 'w1' && (m.type === 'granted' || m.type === 'failed'),
      30_000,
    );
    expect(got).toMatchObject({ type: 'granted', attempts: 3 });
    expect(got.token).toBeGreaterThan(holder.fencingToken);
    worker.send({ type: 'release', id: 'w1' });
    expect(await worker.waitForMessage((m) => m.type === 'released', 30_000)).toMatchObject({ result: true });
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  });

  it('serves waiters of two processes and one local queue, all woken by releases', async () => {
    const holderEngine = env.engine(LONG_LEASE);
    const localEngine = env.engine(LONG_LEASE);
    const key = uniqueKey('mixed');
    const events = acquiredEvents(localEngine, key);
    const remote = [startWorker(), startWorker()];
    await Promise.all(remote.map((w) => w.waitForMessage((m) => m.type === 'ready', 90_000)));

    const holder = await holderEngine.acquire(key);
    // Remote waiters hold the lock until told to release; local ones release at once.
    remote.forEach((w, i) => w.send({ type: 'acquire', id: `r${i}`, key, options: WAIT }));
    const localBusy = nextEvent(localEngine, 'contended', (e) => e.key === key);
    const locals = Array.from({ length: 3 }, () =>
      track(localEngine.using(key, WAIT, async (lock: LockHandle) => lock.fencingToken)),
    );
    await Promise.all(
      remote.map((w) => w.waitForMessage((m) => m.type === 'contended' && m.key === key, 30_000)),
    );
    await localBusy;

    await holder.release();
    // Whichever remote worker wins next holds the lock until it is told to release it.
    const outcomes = remote.map((w, i) =>
      w
        .waitForMessage((m) => m.id === `r${i}` && (m.type === 'granted' || m.type === 'failed'), 60_000)
        .then((m) => ({ w, m })),
    );
    const pending = new Set(outcomes);
    while (pending.size > 0) {
      const next = await Promise.race([...pending].map((p) => p.then((value) => ({ p, value }))));
      pending.delete(next.p);
      expect(next.value.m).toMatchObject({ type: 'granted' });
      next.value.w.send({ type: 'release', id: next.value.m.id });
      expect(await next.value.w.waitForMessage((m) => m.type === 'released', 30_000)).toMatchObject({
        result: true,
      });
    }
    const localTokens = await Promise.all(locals.map((l) => l.result));
    expect(localTokens).toHaveLength(3);

    // No waiter polled: every attempt is explained by a wake-up (a release) or the initial two.
    const releases = 1 + remote.length + locals.length;
    const remoteAttempts = remote.map(
      (w) => w.messages.find((m) => m.type === 'granted')!.attempts as number,
    );
    for (const attempts of [...remoteAttempts, ...events.map((e) => e.attempts)]) {
      expect(attempts).toBeLessThanOrEqual(2 + releases);
    }
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  }, 120_000);
});
