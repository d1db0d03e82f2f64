/*
 * Fair lock (`fair: true`) in one process against a real Redis: FIFO order, a waiter that gives up
 * leaves the queue at once, reentrancy, fencing, leases, and keys that always expire.
 */
import { LockLostError, LockNotAcquiredError, LockWrongTypeError } from '../../lib/core/errors';
import { fairDeadlinesKey } from '../../lib/core/kinds/fair-lock';
import calculateSlot from 'cluster-key-slot';
import { keysWithoutTtl } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { FAMILY_ENV, lockNames, PREFIX } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const FAIR = { fair: true } as const;
const queueLength = (key: string): Promise<number> => env.admin.zcard(lockNames(key, 'fair').aux);

describe('fair lock', () => {
  it('grants waiters of several engines in the order they arrived', async () => {
    const engines = [env.engine(), env.engine(), env.engine()];
    const key = uniqueKey('fair-order');
    const holder = await engines[0]!.acquire(key, FAIR);
    const order: number[] = [];
    const waiters: Promise<void>[] = [];
    for (let i = 0; i < 9; i++) {
      waiters.push(
        engines[i % 3]!.acquire(key, FAIR).then(async (h) => {
          order.push(i);
          await h.release();
        }),
      );
      await waitUntil(async () => (await queueLength(key)) === i + 1, {
        description: `waiter ${i} in the queue`,
      });
    }
    await holder.release();
    await Promise.all(waiters);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await env.admin.keys(`${PREFIX}{${key}}:fair*`)).toEqual([]);
  });

  it('refuses a single attempt from the back of the queue and leaves no place behind', async () => {
    // Queue deadlines of 242 s (backoff 60 s): a place can only vanish within the test by leaving.
    const engine = env.engine({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const key = uniqueKey('fair-no-barging');
    const holder = await engine.acquire(key, FAIR);
    const first = engine.acquire(key, FAIR);
    await waitUntil(async () => (await queueLength(key)) === 1);
    await holder.release();
    const h = await first;
    await h.release();
    const again = await engine.acquire(key, FAIR);
    const queued = engine.acquire(key, FAIR);
    await waitUntil(async () => (await queueLength(key)) === 1);
    expect(await engine.tryAcquire(key, FAIR)).toBeNull();
    await waitUntil(async () => (await queueLength(key)) === 1, {
      description: 'the refused newcomer to leave',
    });
    await again.release();
    await (await queued).release();
  });

  it('takes an aborted waiter out of the queue at once, so the next one is not held up by its deadline', async () => {
    // A backoff of 60 s makes each waiter's queue deadline 242 s, far beyond this test: the next
    // waiter can only get the lock in time if the aborted one removed itself.
    const engine = env.engine({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const key = uniqueKey('fair-abort');
    const holder = await engine.acquire(key, FAIR);
    const controller = new AbortController();
    const aborted = engine.acquire(key, { ...FAIR, signal: controller.signal });
    await waitUntil(async () => (await queueLength(key)) === 1);
    const next = engine.acquire(key, { ...FAIR, waitMs: 20_000 });
    await waitUntil(async () => (await queueLength(key)) === 2);
    controller.abort(new Error('no longer needed'));
    await expect(aborted).rejects.toThrow('no longer needed');
    await waitUntil(async () => (await queueLength(key)) === 1, {
      description: 'the aborted waiter to leave',
    });
    await holder.release();
    const h = await next;
    expect(h.isHeld).toBe(true);
    await h.release();
  });

  it('takes a waiter whose waitMs ran out out of the queue', async () => {
    const engine = env.engine({ backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const key = uniqueKey('fair-timeout');
    const holder = await engine.acquire(key, FAIR);
    const impatient = engine.acquire(key, { ...FAIR, waitMs: 300 });
    await waitUntil(async () => (await queueLength(key)) === 1);
    const patient = engine.acquire(key, { ...FAIR, waitMs: 20_000 });
    await expect(impatient).rejects.toBeInstanceOf(LockNotAcquiredError);
    await waitUntil(async () => (await queueLength(key)) === 1, {
      description: 'the impatient waiter to leave',
    });
    await holder.release();
    const h = await patient;
    expect(h.isHeld).toBe(true);
    await h.release();
    expect(await queueLength(key)).toBe(0);
  });

  it('re-enters in the same async context without queueing behind waiting others', async () => {
    const engine = env.engine();
    const other = env.engine();
    const key = uniqueKey('fair-reenter');
    const names = lockNames(key, 'fair');
    const outer = await engine.acquire(key, FAIR);
    const waiting = other.acquire(key, FAIR);
    await waitUntil(async () => (await queueLength(key)) === 1);
    await engine.runInLock(outer, async () => {
      const inner = await engine.acquire(key, { ...FAIR, waitMs: 0 });
      expect(inner.fencingToken).toBe(outer.fencingToken);
      expect(await env.admin.hlen(names.lock)).toBe(4); // owner, fence and two holds
      expect(await inner.release()).toBe(true);
    });
    expect(outer.isHeld).toBe(true);
    expect(await queueLength(key)).toBe(1);
    await outer.release();
    const next = await waiting;
    expect(next.fencingToken).toBeGreaterThan(outer.fencingToken);
    await next.release();
  });

  it('hands out strictly increasing fencing tokens', async () => {
    const engine = env.engine();
    const key = uniqueKey('fair-fence');
    const tokens: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, () => engine.using(key, FAIR, async (h) => void tokens.push(h.fencingToken))),
    );
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  });

  it('keeps the lock alive with the watchdog and aborts the holder when its lock is deleted', async () => {
    const engine = env.engine({ watchdogLeaseMs: 1_000, renewEveryMs: 200 });
    const key = uniqueKey('fair-watchdog');
    const h = await engine.acquire(key, FAIR);
    let renewals = 0;
    engine.events.on('renewed', (round) => (renewals += round.renewed));
    await waitUntil(() => renewals >= 5, { description: 'five renewals' });
    expect(h.signal.aborted).toBe(false);
    await env.admin.del(lockNames(key, 'fair').lock);
    const reason = await whenAborted(h.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('deleted');
  });

  it('ends a fixed lease with the signal and lets the next waiter in', async () => {
    const engine = env.engine();
    const key = uniqueKey('fair-lease');
    const h = await engine.acquire(key, { ...FAIR, leaseMs: 300 });
    const next = engine.acquire(key, FAIR);
    expect(await whenAborted(h.signal)).toMatchObject({ reason: 'expired' });
    const n = await next;
    expect(n.fencingToken).toBeGreaterThan(h.fencingToken);
    expect(await h.release()).toBe(false);
    await n.release();
  });

  it('keeps a TTL on the lock, the queue and the deadlines, and reports foreign data untouched', async () => {
    const engine = env.engine();
    const key = uniqueKey('fair-ttl');
    const names = lockNames(key, 'fair');
    const h = await engine.acquire(key, FAIR);
    const waiting = engine.acquire(key, FAIR);
    await waitUntil(async () => (await queueLength(key)) === 1);
    expect(await env.admin.exists(fairDeadlinesKey(names))).toBe(1);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
    await h.release();
    await (await waiting).release();

    await env.admin.set(names.aux, 'app-data');
    await expect(engine.acquire(key, FAIR)).rejects.toBeInstanceOf(LockWrongTypeError);
    expect(await env.admin.get(names.aux)).toBe('app-data');
    await env.admin.del(names.aux);
  });

  it('keeps every key of a fair, read-write and semaphore lock in one Cluster slot, whatever the key text', () => {
    for (const key of ['plain', 'user:{42}', '}{', '{', 'a{b}c', 'émoji 🔒 {x}']) {
      const fair = lockNames(key, 'fair');
      const all = [
        fair.lock,
        fair.aux,
        fairDeadlinesKey(fair),
        fair.fence,
        fair.channel,
        ...(['rw', 'sem'] as const).flatMap((tag) => Object.values(lockNames(key, tag))),
      ];
      expect(new Set(all.map((name) => calculateSlot(name))).size).toBe(1);
    }
  });
});
