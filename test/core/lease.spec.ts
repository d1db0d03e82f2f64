/*
 * Leases on a real Redis: a fixed lease ends the lock and tells the holder; the watchdog keeps a lock
 * alive for as long as it is held and tells the holder the moment it finds the key gone; a holder that
 * dies without releasing frees the lock when its lease runs out. The timing of each (the local end a
 * drift allowance before Redis', renewal periods over hundreds of leases, a fixed lease never renewed,
 * the token lock's watchdog) is exact in virtual time: test/virtual-time/leases.spec.ts.
 */
import { LockLostError } from '../../lib/core/errors';
import { KeySpace } from '../../lib/core/kinds/key-space';
import { nodeRuntime } from '../../lib/core/runtime/runtime';
import { spawnWorker, workerPath, WorkerProcess } from '../support/spawn-worker';
import { waitUntil } from '../support/wait';
import {
  holdCount,
  mutexFence,
  nextEvent,
  track,
  uniqueKey,
  useLockEnv,
  whenAborted,
} from '../support/lock-env';

const WORKER = workerPath('holder-worker.ts');
const PREFIX = 'lease:';
const keys = new KeySpace(PREFIX);
const lockName = (key: string): string => keys.names(key, 'm').lock;
const workers: WorkerProcess[] = [];

// Registered first, so the workers stop before the env's own afterEach closes the engines.
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
const env = useLockEnv();

describe('fixed lease (leaseMs)', () => {
  it.each([
    ['reentrant mutex', {}],
    ['token lock', { reentrant: false }],
  ])(
    'ends the %s at the lease: the signal aborts with LockLostError("expired") and the key goes',
    async (_kind, options) => {
      const engine = env.engine({ keyPrefix: PREFIX });
      const key = uniqueKey('fixed');
      const lost = nextEvent(engine, 'lost', (e) => e.key === key);
      const handle = await engine.acquire(key, { ...options, leaseMs: 1000 });
      expect(handle.signal.aborted).toBe(false);
      expect(await env.admin.pttl(lockName(key))).toBeGreaterThan(0);

      const reason = await whenAborted(handle.signal);
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('expired');
      expect((reason as LockLostError).key).toBe(key);
      expect(await lost).toMatchObject({ key, reason: 'expired' });
      expect(handle.isHeld).toBe(false);
      expect(handle.remainingMs()).toBe(0);
      // Redis ends the key by its own PEXPIRE, which started when the script ran (a little after the
      // client's timer started), so it may outlive the client's notion by a few ms.
      await waitUntil(async () => (await env.admin.exists(lockName(key))) === 0, {
        description: 'the key to expire',
      });
      expect(await handle.release()).toBe(false);
      expect(engine.stats()).toMatchObject({ held: 0, watchdog: 0 });
    },
  );

  it('moves the end of a fixed lease with extend(), and the signal follows', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('extend');
    // A lease long enough that a loaded machine cannot let it end before extend() (the test never waits it out).
    const handle = await engine.acquire(key, { leaseMs: 5_000 });
    await handle.extend(60_000);
    expect(await env.admin.pttl(lockName(key))).toBeGreaterThan(30_000);
    expect(handle.remainingMs()).toBeGreaterThan(30_000);
    expect(handle.signal.aborted).toBe(false);
    expect(await handle.release()).toBe(true);
  });
});

describe('watchdog lease', () => {
  it('keeps a lock alive past several leases while it is held', async () => {
    // Short lease so that "several leases" pass quickly; generous against event-loop stalls on a
    // busy machine (a stall longer than the lease would rightly lose the lock).
    const leaseMs = 1000;
    const engine = env.engine({ keyPrefix: PREFIX, watchdogLeaseMs: leaseMs, renewEveryMs: 200 });
    const key = uniqueKey('watchdog');
    let renewed = 0;
    engine.events.on('renewed', (round) => (renewed += round.renewed));
    const handle = await engine.acquire(key);
    const start = nodeRuntime.now();
    expect(engine.stats().watchdog).toBe(1);

    // Hold for more than 3 leases, and until at least 8 renewals happened.
    await waitUntil(() => nodeRuntime.now() - start > 3.5 * leaseMs && renewed >= 8, {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'more than three leases and eight renewals',
    });
    expect(handle.signal.aborted).toBe(false);
    expect(handle.isHeld).toBe(true);
    // Still ours in Redis: our grant's fencing token, our single hold, a live TTL.
    expect(await mutexFence(env.admin, lockName(key))).toBe(String(handle.fencingToken));
    expect(await holdCount(env.admin, lockName(key))).toBe(1);
    const pttl = await env.admin.pttl(lockName(key));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(leaseMs);

    expect(await handle.release()).toBe(true);
    expect(engine.stats().watchdog).toBe(0);
    expect(await env.admin.exists(lockName(key))).toBe(0);
  });

  it('aborts the signal with reason "deleted" at the next renewal after the key was deleted', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, watchdogLeaseMs: 3000, renewEveryMs: 100 });
    const key = uniqueKey('deleted');
    const handle = await engine.acquire(key);
    const lost = nextEvent(engine, 'lost', (e) => e.key === key);
    expect(await env.admin.del(lockName(key))).toBe(1);

    const reason = await whenAborted(handle.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('deleted');
    expect(await lost).toMatchObject({ key, reason: 'deleted' });
    expect(engine.stats()).toMatchObject({ held: 0, watchdog: 0 });
    expect(await handle.release()).toBe(false);
    expect(await env.admin.exists(lockName(key))).toBe(0); // the watchdog did not bring it back
  });

  it('aborts the signal with reason "taken-over" when another owner holds the key at renewal', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, watchdogLeaseMs: 3000, renewEveryMs: 100 });
    const other = env.engine({ keyPrefix: PREFIX });
    const key = uniqueKey('taken-over');
    const handle = await engine.acquire(key);
    await env.admin.del(lockName(key));
    const thief = await other.acquire(key, { waitMs: 0 });
    const reason = await whenAborted(handle.signal);
    expect((reason as LockLostError).reason).toBe('taken-over');
    // The watchdog renewed nothing of the new owner's and left its hold alone.
    expect(await mutexFence(env.admin, lockName(key))).toBe(String(thief.fencingToken));
    expect(await handle.release()).toBe(false);
    expect(await holdCount(env.admin, lockName(key))).toBe(1);
    expect(await thief.release()).toBe(true);
  });
});

describe('a holder process that dies', () => {
  it.each([
    ['watchdog lease', {}],
    ['fixed lease', { leaseMs: 1500 }],
  ])(
    'frees the lock after its %s when killed with SIGKILL, and another process acquires it',
    async (_label, options) => {
      const worker = spawnWorker(WORKER, {
        env: {
          REDIS_URL: env.url,
          ENGINE_OPTIONS: JSON.stringify({ keyPrefix: PREFIX, watchdogLeaseMs: 1500, renewEveryMs: 300 }),
        },
      });
      workers.push(worker);
      await worker.waitForMessage((m) => m.type === 'ready', 90_000);
      const key = uniqueKey('killed');
      worker.send({ type: 'acquire', id: 'h', key, options });
      const held = await worker.waitForMessage((m) => m.id === 'h', 30_000);
      expect(held).toMatchObject({ type: 'granted' });

      const engine = env.engine({ keyPrefix: PREFIX });
      const waiter = track(engine.acquire(key, { waitMs: 60_000 }));
      await nextEvent(engine, 'contended', (e) => e.key === key);
      worker.kill('SIGKILL');
      expect(await worker.exited).toMatchObject({ signal: 'SIGKILL' });
      // The dead holder released nothing: its key is still there, with a lease that runs out.
      const pttl = await env.admin.pttl(lockName(key));
      expect(pttl === -2 || (pttl > 0 && pttl <= 1500)).toBe(true);

      const handle = await waiter.result;
      expect(handle.fencingToken).toBeGreaterThan(held.token);
      expect(await mutexFence(env.admin, lockName(key))).toBe(String(handle.fencingToken));
      expect(await handle.release()).toBe(true);
    },
  );
});
