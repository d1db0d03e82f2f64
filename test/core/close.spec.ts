/*
 * Shutdown: close() fails waiters with "shutting down", releases held locks and tells their holders
 * (reason 'closed'), stops timers, unsubscribes and closes the connections the engine opened,
 * but never a client the user passed in.
 */
import { LockError, LockLostError, LockNotAcquiredError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { InspectionKeys } from '../../lib/core/inspection/inspection-keys';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { hostProcess } from '../support/host-process';
import { closeClient, listClients, pubsubChannels } from '../support/redis-assertions';
import { sleep, waitUntil } from '../support/wait';
import { commandsDuring, nextEvent, track, uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';

const PREFIX = 'close:';
const keys = new KeySpace(PREFIX);
const notices = new InspectionKeys(PREFIX);
const lockName = (key: string): string => keys.names(key, 'm').lock;
const env = useLockEnv();

/** Engine-owned connections carry this name (the subscriber duplicates the main connection's options). */
function namedEngine(name: string): LockEngine {
  return env.engine({
    redis: { host: env.server.host, port: env.server.port, connectionName: name },
    keyPrefix: PREFIX,
    watchdogLeaseMs: 3000,
    renewEveryMs: 500,
  });
}

/** Timers and sockets of this process, by resource type. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of hostProcess.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/**
 * Holds one lock (watchdog running), keeps two local waiters on another engine's lock (subscribed,
 * one at the head, one queued), so that close() has every kind of state to clean up.
 */
async function busyEngine(engine: LockEngine, blocker: LockEngine) {
  const heldKey = uniqueKey('held');
  const waitKey = uniqueKey('waited');
  const held = await engine.acquire(heldKey);
  const nested = await engine.runInLock(held, () => engine.acquire(heldKey));
  const block = await blocker.acquire(waitKey);
  const busy = nextEvent(engine, 'contended', (e) => e.key === waitKey);
  const waiters = [
    track(engine.acquire(waitKey, { waitMs: 600_000 })),
    track(engine.acquire(waitKey, { waitMs: 600_000 })),
  ];
  await busy;
  await waitUntil(async () => (await pubsubChannels(env.admin)).includes(keys.names(waitKey).channel), {
    description: 'the waiters to subscribe',
  });
  return { heldKey, waitKey, held, nested, block, waiters };
}

describe('close()', () => {
  it('rejects waiters with LockNotAcquiredError (shutting down) and releases held locks with reason "closed"', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const blocker = env.engine({ keyPrefix: PREFIX });
    const s = await busyEngine(engine, blocker);
    const notAcquired: string[] = [];
    engine.events.on('notAcquired', (e) => notAcquired.push(e.reason));
    const lost = nextEvent(engine, 'lost', (e) => e.key === s.heldKey);

    await engine.close();

    for (const waiter of s.waiters) {
      const err = await waiter.result.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockNotAcquiredError);
      expect((err as Error).message).toMatch(/shutting down/);
    }
    expect(notAcquired).toEqual(['closed', 'closed']);
    // Both holds (outer and nested) were released in Redis, and the holder was told.
    expect(await env.admin.exists(lockName(s.heldKey))).toBe(0);
    const reason = await whenAborted(s.held.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('closed');
    expect(s.nested.signal.aborted).toBe(true);
    expect(await lost).toMatchObject({ reason: 'closed' });
    // Releasing afterwards (a `finally` after shutdown) reports false and never throws.
    expect(await s.held.release()).toBe(false);
    expect(await s.nested.release()).toBe(false);
    // The other engine's lock is not ours to touch.
    expect(s.block.isHeld).toBe(true);
    expect(await env.admin.exists(lockName(s.waitKey))).toBe(1);
    expect(engine.stats()).toEqual({ held: 0, watchdog: 0, waitingLocks: 0, channels: 0, closed: true });
  });

  it('lets a using() body in progress finish; its lock is released and its signal says "closed"', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('using');
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    const entered = nextEvent(engine, 'acquired', (e) => e.key === key);
    const section = track(
      engine.using(key, {}, async (lock) => {
        await gate;
        return (lock.signal.reason as LockLostError).reason;
      }),
    );
    await entered;
    await engine.close();
    expect(await env.admin.exists(lockName(key))).toBe(0);
    go();
    expect(await section.result).toBe('closed');
  });

  it('with drainMs, waits for a using() body in progress: the lock stays held and renewed until it ends', async () => {
    const engine = env.engine({
      keyPrefix: PREFIX,
      drainMs: 30_000,
      watchdogLeaseMs: 600,
      renewEveryMs: 200,
    });
    const key = uniqueKey('drain');
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const section = track(
      engine.using(key, {}, async (lock) => {
        inside();
        await gate;
        return lock.signal.aborted;
      }),
    );
    await entered; // the body runs (close() drains bodies that have started)
    const closing = track(engine.close());
    // Past a few watchdog leases: the section still holds its lock, renewed, and close() still waits.
    await nextEvent(engine, 'renewed', (e) => e.renewed > 0);
    await nextEvent(engine, 'renewed', (e) => e.renewed > 0);
    expect(await env.admin.exists(lockName(key))).toBe(1);
    expect(closing.settled).toBe(false);
    await expect(engine.acquire(uniqueKey('late'))).rejects.toThrow(/shutting down/);
    go();
    expect(await section.result).toBe(false); // released normally, its signal never aborted
    await closing.result;
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });

  it('with drainMs, also waits for a using() whose lock was granted just before close(), body not started yet', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, drainMs: 30_000 });
    const key = uniqueKey('drain-granted');
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    const granted = nextEvent(engine, 'acquired', (e) => e.key === key);
    const section = track(
      engine.using(key, {}, async (lock) => {
        await gate;
        return lock.signal.aborted;
      }),
    );
    await granted; // reported by acquire(), before using() has entered the body
    const closing = track(engine.close());
    await sleep(200);
    expect(closing.settled).toBe(false);
    expect(await env.admin.exists(lockName(key))).toBe(1);
    go();
    expect(await section.result).toBe(false);
    await closing.result;
  });

  it('refuses new calls afterwards without sending anything, and can be called again', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    await engine.close();
    const sent = await commandsDuring(env.server.port, async () => {
      const err = await engine.acquire(uniqueKey('after')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockError);
      expect((err as Error).message).toMatch(/closed/);
      await expect(engine.tryAcquire(uniqueKey('after'))).rejects.toBeInstanceOf(LockError);
    });
    expect(sent).toEqual({});
    await expect(engine.close()).resolves.toBeUndefined();
  });

  it('leaves no subscription, no connection of its own, no timer and no socket behind', async () => {
    const blocker = env.engine({ keyPrefix: PREFIX });
    await (await blocker.acquire(uniqueKey('warm-up'))).release(); // its connection is up before the baseline
    const baseline = resources();
    const name = `ndl-owned-${process.pid}`;
    const engine = namedEngine(name);
    const s = await busyEngine(engine, blocker);
    const ours = async () => (await listClients(env.admin)).filter((c) => c.name === name);
    expect((await ours()).length).toBe(2); // commands + wake-up subscriber
    expect((await ours()).some((c) => Number(c.sub) > 0)).toBe(true);
    expect(resources().TCPSocketWrap ?? 0).toBeGreaterThan(baseline.TCPSocketWrap ?? 0); // the probe sees them
    expect(engine.stats()).toMatchObject({ held: 1, watchdog: 1, waitingLocks: 1, channels: 1 });

    await engine.close();
    await Promise.all(s.waiters.map((w) => w.result.catch(() => undefined)));
    await s.block.release();

    // Only the blocker, still open, listens: on its own force-release notice channel.
    expect(await pubsubChannels(env.admin)).toEqual([notices.notice(blocker.engineId)]);
    await waitUntil(async () => (await ours()).length === 0, {
      description: 'the engine connections to close',
    });
    // Timers (watchdog, lease, waits) and sockets come back to what they were before the engine.
    await waitUntil(
      () => {
        const now = resources();
        return (
          (now.Timeout ?? 0) <= (baseline.Timeout ?? 0) &&
          (now.TCPSocketWrap ?? 0) <= (baseline.TCPSocketWrap ?? 0)
        );
      },
      { description: `timers and sockets back to ${JSON.stringify(baseline)}` },
    );
    expect(engine.stats()).toEqual({ held: 0, watchdog: 0, waitingLocks: 0, channels: 0, closed: true });
  });

  it('never closes a client passed in, but closes the subscriber connection it opened next to it', async () => {
    const name = `ndl-user-${process.pid}`;
    const user = env.client({ connectionName: name });
    await user.ping();
    const userId = Number(await user.client('ID'));
    const engine = env.engine({ redis: user, keyPrefix: PREFIX });
    const blocker = env.engine({ keyPrefix: PREFIX });
    const s = await busyEngine(engine, blocker);
    const named = async () =>
      (await listClients(env.admin)).filter((c) => c.name === name).map((c) => Number(c.id));
    expect((await named()).length).toBe(2); // the user's client and the engine's subscriber

    await engine.close();
    await Promise.all(s.waiters.map((w) => w.result.catch(() => undefined)));
    await s.block.release();

    await waitUntil(async () => (await named()).length === 1, { description: 'the subscriber to close' });
    expect(await named()).toEqual([userId]);
    expect(user.status).toBe('ready');
    expect(await user.ping()).toBe('PONG');
    expect(await pubsubChannels(env.admin)).toEqual([notices.notice(blocker.engineId)]);
    await closeClient(user);
  });
});
