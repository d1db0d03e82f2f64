/*
 * Fair cohorts (`cohort: { fair: true }`) in one process against a real Redis: the fair lock keeps
 * one Redis queue entry per process (its head local waiter holds the place, the others queue in the
 * local FIFO), a release hands the lock to the next local waiter without a Redis lock script, and
 * the entry leaves the queue when the last local waiter gives up (and only then).
 */
import { fairDeadlinesKey } from '../../lib/core/kinds/fair-lock';
import type { LockHandle } from '../../lib/core';
import { keysWithoutTtl } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';
import { commandsDuring, nextEvent, track, uniqueKey, useLockEnv } from '../support/lock-env';
import { FAMILY_ENV, lockNames, PREFIX } from '../support/family-locks';

const env = useLockEnv(FAMILY_ENV);

const FAIR = { fair: true } as const;
/** A generous time budget: a busy machine must not end a cohort by the default 50 ms. */
const FAIR_COHORTS = { cohort: { passes: 32, budgetMs: 60_000, fair: true } };
/** Queue deadlines of 242 s: an entry can only vanish within a test by leaving. */
const SLOW_BACKOFF = { backoff: { initialMs: 60_000, maxMs: 60_000 } };

const queue = (key: string): Promise<string[]> => env.admin.zrange(lockNames(key, 'fair').aux, '0', '-1');

describe('fair cohorts', () => {
  it('queues one entry per process and hands the lock over locally without a Redis lock script', async () => {
    const engine = env.engine(FAIR_COHORTS);
    const other = env.engine(FAIR_COHORTS);
    const key = uniqueKey('fair-cohort');
    const names = lockNames(key, 'fair');
    const gate = await other.acquire(key, FAIR);
    const order: number[] = [];
    const waiters = Array.from({ length: 4 }, (_, i) =>
      track(
        engine.acquire(key, { ...FAIR, waitMs: 30_000 }).then((h) => {
          order.push(i);
          return h;
        }),
      ),
    );
    await nextEvent(engine, 'contended', (e) => e.key === key);
    // Four local waiters, one place: the process' id.
    expect(await queue(key)).toEqual([engine.engineId]);
    await gate.release();
    let holder: LockHandle = await waiters[0]!.result;
    expect(await queue(key)).toEqual([]);
    for (let i = 1; i < waiters.length; i++) {
      let next!: LockHandle;
      const commands = await commandsDuring(env.server.port, async () => {
        expect(await holder.release()).toBe(true);
        next = await waiters[i]!.result;
      });
      // No lock script went to Redis for the hand-off; the next token of the reserved block.
      expect((commands.evalsha ?? 0) + (commands.eval ?? 0)).toBe(0);
      expect(next.fencingToken).toBe(holder.fencingToken + 1);
      holder = next;
    }
    expect(order).toEqual([0, 1, 2, 3]);
    expect(await holder.release()).toBe(true);
    expect(await env.admin.exists(names.lock)).toBe(0);
    expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
  });

  it('hands a fixed-lease fair lock over by the mutex rules: each holder its own lease, covered by the PTTL', async () => {
    const engine = env.engine(FAIR_COHORTS);
    const key = uniqueKey('fair-cohort-fixed');
    const names = lockNames(key, 'fair');
    const gate = await env.engine(FAIR_COHORTS).acquire(key, FAIR);
    const lease = { ...FAIR, leaseMs: 20_000, waitMs: 30_000 };
    const waiters = [track(engine.acquire(key, lease)), track(engine.acquire(key, lease))];
    await nextEvent(engine, 'contended', (e) => e.key === key);
    await gate.release();
    const first = await waiters[0]!.result;
    // Asked with a local waiter behind it: the Redis lease covers the successor's whole lease.
    expect(await env.admin.pttl(names.lock)).toBeGreaterThan(20_000);
    let second!: LockHandle;
    const commands = await commandsDuring(env.server.port, async () => {
      await first.release();
      second = await waiters[1]!.result;
    });
    expect((commands.evalsha ?? 0) + (commands.eval ?? 0)).toBe(0);
    const left = second.remainingMs();
    expect(await env.admin.pttl(names.lock)).toBeGreaterThanOrEqual(Math.floor(left));
    expect(second.fencingToken).toBe(first.fencingToken + 1);
    expect(await second.release()).toBe(true);
  });

  it('gives the lock to the next process in the queue when the cohort ends, and the ended one queues again at the back', async () => {
    // One hand-off per cohort: the third local waiter must queue again behind the other process.
    const a = env.engine({ cohort: { passes: 1, budgetMs: 60_000, fair: true } });
    const b = env.engine(FAIR_COHORTS);
    const key = uniqueKey('fair-cohort-end');
    const gate = await env.engine(FAIR_COHORTS).acquire(key, FAIR);
    const order: string[] = [];
    const take = (engine: typeof a, id: string) =>
      engine.acquire(key, { ...FAIR, waitMs: 30_000 }).then(async (h) => {
        order.push(id);
        await h.release();
      });
    const a1 = take(a, 'a1');
    const a2 = take(a, 'a2');
    const a3 = take(a, 'a3');
    await waitUntil(async () => (await queue(key)).length === 1);
    const b1 = take(b, 'b1');
    await waitUntil(async () => (await queue(key)).length === 2);
    expect(await queue(key)).toEqual([a.engineId, b.engineId]);
    await gate.release();
    await Promise.all([a1, a2, a3, b1]);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('keeps the entry for the next local waiter when one gives up, and takes it out with the last one', async () => {
    const engine = env.engine({ ...FAIR_COHORTS, ...SLOW_BACKOFF });
    const other = env.engine({ ...FAIR_COHORTS, ...SLOW_BACKOFF });
    const key = uniqueKey('fair-cohort-abandon');
    const names = lockNames(key, 'fair');
    const gate = await other.acquire(key, FAIR);
    const first = new AbortController();
    const second = new AbortController();
    const w1 = track(engine.acquire(key, { ...FAIR, signal: first.signal }));
    const w2 = track(engine.acquire(key, { ...FAIR, signal: second.signal }));
    await waitUntil(async () => (await queue(key)).length === 1);
    const later = track(env.engine(FAIR_COHORTS).acquire(key, { ...FAIR, waitMs: 30_000 }));
    await waitUntil(async () => (await queue(key)).length === 2);

    // The head gives up: the next local waiter attempts at once and keeps the process' place.
    const refreshed = nextEvent(engine, 'contended', (e) => e.key === key);
    first.abort(new Error('first gave up'));
    await expect(w1.result).rejects.toThrow('first gave up');
    await refreshed;
    const place = await queue(key);
    expect(place[0]).toBe(engine.engineId);
    expect(place).toHaveLength(2);
    expect(await env.admin.hexists(fairDeadlinesKey(names), engine.engineId)).toBe(1);

    // The last local waiter gives up: the entry leaves at once, the other process is next.
    second.abort(new Error('second gave up'));
    await expect(w2.result).rejects.toThrow('second gave up');
    await waitUntil(async () => (await queue(key)).length === 1, {
      description: "the process' entry to leave",
    });
    expect((await queue(key))[0]).not.toBe(engine.engineId);
    await gate.release();
    const h = await later.result;
    expect(h.isHeld).toBe(true);
    await h.release();
  });

  it('with cohort: false keeps one entry per waiter, as without fair cohorts', async () => {
    const engine = env.engine({ cohort: false });
    const other = env.engine({ cohort: false });
    const key = uniqueKey('fair-no-cohort');
    const gate = await other.acquire(key, FAIR);
    const waiters = [engine.acquire(key, FAIR), engine.acquire(key, FAIR)];
    await waitUntil(async () => (await queue(key)).length === 2);
    expect((await queue(key)).every((entry) => entry.startsWith(`${engine.engineId}.`))).toBe(true);
    await gate.release();
    for (const w of waiters) await (await w).release();
  });
});
