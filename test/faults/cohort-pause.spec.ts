/**
 * Scenario 3 mid-cohort (issue 11): a holder frozen by SIGSTOP past its lease while a waiter of its
 * own process is queued for the same lock. The frozen lease must not be handed over: after SIGCONT
 * the local waiter gets no hand-off, waits in Redis like anyone else while a holder of another
 * process has the lock, and only then gets a fresh grant with a higher token; the frozen holder's
 * stale write is rejected by the fencing oracle and its late release reports false.
 */
import { epochMs, round1 } from '../support/clock';
import { expectCleanRedis, faultEngine } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { startHolder } from '../support/holders';

const env = useFaultEnv();
const figures = faultFigures();

it('hands nothing over from a holder frozen past its lease mid-cohort', async () => {
  const key = 'cohort:sigstop';
  const holder = await startHolder(env.redis.url, env.storeServer.url);
  const engine = faultEngine(env.redis.url);
  try {
    holder.send({ type: 'acquire', id: 'first', key });
    const first = await holder.next('granted', 'first');
    holder.send({ type: 'write', id: 'first', resource: key });
    expect((await holder.next('written', 'first')).accepted).toBe(true);
    // A second caller of the same process queues behind the first: the cohort's next holder.
    holder.send({ type: 'acquire', id: 'next', key });
    holder.send({ type: 'ping' });
    await holder.next('pong');

    holder.process.pause();
    const frozenAt = epochMs();
    const second = await engine.acquire(key, { waitMs: 30_000 }); // once the frozen lease ran out
    const secondAt = epochMs();
    expect(second.fencingToken).toBeGreaterThan(first.token);
    expect((await env.store.write(key, second.fencingToken, 'second')).accepted).toBe(true);

    holder.process.resume();
    holder.send({ type: 'write', id: 'first', resource: key });
    const stale = await holder.next('written', 'first');
    expect(stale.accepted).toBe(false);
    holder.send({ type: 'release', id: 'first' });
    expect((await holder.next('released', 'first')).result).toBe(false);
    holder.send({ type: 'ping' });
    await holder.next('pong');
    // No hand-off of the dead lease: the local waiter is still waiting while `second` holds.
    expect(holder.process.messages.some((m) => m.type === 'granted' && m.id === 'next')).toBe(false);
    expect(second.signal.aborted).toBe(false);

    expect(await second.release()).toBe(true);
    const next = await holder.next('granted', 'next');
    expect(next.token).toBeGreaterThan(second.fencingToken);
    holder.send({ type: 'write', id: 'next', resource: key });
    expect((await holder.next('written', 'next')).accepted).toBe(true);
    holder.send({ type: 'release', id: 'next' });
    expect((await holder.next('released', 'next')).result).toBe(true);
    expect(holder.unhandled()).toEqual([]);
    await expectCleanRedis(env.admin);
    figures.record('3b-holder-sigstop-mid-cohort', {
      title: 'Holder SIGSTOPped past its lease with a local waiter queued (cohorts)',
      handoverToOtherProcessAfterFreezeMs: round1(secondAt - frozenAt),
      localWaiterHandedDeadLease: false,
      staleWriteRejected: !stale.accepted,
      tokens: { first: first.token, otherProcess: second.fencingToken, localWaiter: next.token },
    });
  } finally {
    await engine.close();
    await holder.stop();
  }
});
