/**
 * Scenario 3 mid-cohort with a fixed lease (issue 17): a holder that got the lock by a local hand-off
 * (a fixed-lease successor, its own leaseMs from its own grant) is frozen by SIGSTOP past that lease
 * while a third caller of its own process is queued. After SIGCONT: the frozen holder's write is
 * rejected by the fencing oracle and its late release reports false; the queued caller gets no
 * hand-off of the dead lease, waits in Redis while a holder of another process has the lock, and
 * then gets a fresh grant with a higher token.
 */
import { epochMs, round1 } from '../support/clock';
import { expectCleanRedis, faultEngine } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { startHolder } from '../support/holders';

const env = useFaultEnv();
const figures = faultFigures();
const LEASE_MS = 1_500;
// A cohort hands over only within its budget from the Redis grant; the test's messages to the
// worker take longer than the default 50 ms on a busy machine, so the budget is wider here. The
// Redis lease of the cohort's grant is then LEASE_MS + budget, and the freeze outlasts it.
const COHORT = { passes: 32, budgetMs: 3_000, yieldMs: 100 };

it('fences off a handed-over fixed-lease holder frozen past its own lease', async () => {
  const key = 'cohort:sigstop:fixed';
  const holder = await startHolder(env.redis.url, env.storeServer.url, { cohort: COHORT });
  const engine = faultEngine(env.redis.url);
  try {
    // Connects the worker's engine first: an attempt sent before its connection is up would reach
    // Redis only later, when the lock may already be free.
    holder.send({
      type: 'acquire',
      id: `${key}:warm-up`,
      key: `${key}:warm-up`,
      options: { leaseMs: LEASE_MS },
    });
    await holder.next('granted', `${key}:warm-up`);
    holder.send({ type: 'release', id: `${key}:warm-up` });
    expect((await holder.next('released', `${key}:warm-up`)).result).toBe(true);
    // The lock is busy elsewhere while three callers of the holder process queue for it, so the
    // first of them is granted in Redis with local waiters behind it (a cohort).
    const gate = await engine.acquire(key, { leaseMs: 20_000 });
    for (const as of ['first', 'next', 'third'])
      holder.send({ type: 'acquire', id: as, key, options: { leaseMs: LEASE_MS } });
    holder.send({ type: 'ping' });
    await holder.next('pong');
    await gate.release();
    const first = await holder.next('granted', 'first');
    expect(first.token).toBeGreaterThan(gate.fencingToken);
    holder.send({ type: 'release', id: 'first' });
    const next = await holder.next('granted', 'next');
    // A local hand-off: the next token of the block the Redis grant reserved (a Redis grant would
    // start above the whole block).
    expect(next.token).toBe(first.token + 1);
    holder.send({ type: 'write', id: 'next', resource: key });
    expect((await holder.next('written', 'next')).accepted).toBe(true);

    holder.process.pause();
    const frozenAt = epochMs();
    const second = await engine.acquire(key, { waitMs: 30_000, leaseMs: 20_000 }); // once the frozen lease ran out
    const secondAt = epochMs();
    expect(second.fencingToken).toBeGreaterThan(next.token);
    expect((await env.store.write(key, second.fencingToken, 'second')).accepted).toBe(true);

    holder.process.resume();
    holder.send({ type: 'write', id: 'next', resource: key });
    const stale = await holder.next('written', 'next');
    expect(stale.accepted).toBe(false);
    holder.send({ type: 'release', id: 'next' });
    expect((await holder.next('released', 'next')).result).toBe(false);
    holder.send({ type: 'ping' });
    await holder.next('pong');
    // No hand-off of the dead lease: the third caller still waits while `second` holds.
    expect(holder.process.messages.some((m) => m.type === 'granted' && m.id === 'third')).toBe(false);
    expect(second.signal.aborted).toBe(false);

    expect(await second.release()).toBe(true);
    const third = await holder.next('granted', 'third');
    expect(third.token).toBeGreaterThan(second.fencingToken);
    holder.send({ type: 'write', id: 'third', resource: key });
    expect((await holder.next('written', 'third')).accepted).toBe(true);
    holder.send({ type: 'release', id: 'third' });
    expect((await holder.next('released', 'third')).result).toBe(true);
    expect(holder.unhandled()).toEqual([]);
    await expectCleanRedis(env.admin);
    figures.record('3c-fixed-lease-successor-sigstop', {
      title: 'Fixed-lease holder handed the lock locally, then SIGSTOPped past its own lease (cohorts)',
      handoverToOtherProcessAfterFreezeMs: round1(secondAt - frozenAt),
      localWaiterHandedDeadLease: false,
      staleWriteRejected: !stale.accepted,
      tokens: {
        first: first.token,
        handedOver: next.token,
        otherProcess: second.fencingToken,
        localWaiter: third.token,
      },
    });
  } finally {
    await engine.close();
    await holder.stop();
  }
});
