/**
 * Scenario 2: a holder process is SIGKILLed while it holds the lock. Liveness: the lock is not
 * stuck; the next holder gets it once the dead holder's lease runs out (its watchdog is dead
 * too, so nothing renews it). Figures: recovery time from the kill to the next grant.
 */
import { round1, summarize, epochMs } from '../support/clock';
import {
  expectCleanRedis,
  faultEngine,
  lockKeyOf,
  RENEW_EVERY_MS,
  WATCHDOG_LEASE_MS,
} from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { startHolder } from '../support/holders';

const env = useFaultEnv();
const figures = faultFigures();

async function crashRound(key: string, leaseMs: number | undefined) {
  const holder = await startHolder(env.redis.url, env.storeServer.url);
  const engine = faultEngine(env.redis.url);
  try {
    holder.send({ type: 'acquire', id: key, key, options: { leaseMs } });
    const victim = await holder.next('granted', key);
    // Let the watchdog renew at least once, so the lease left at the kill is its own doing.
    await new Promise((r) => setTimeout(r, 700));
    let settled = false;
    const next = engine.acquire(key, { waitMs: 30_000 }).finally(() => (settled = true));
    const pttlAtKill = await env.admin.pttl(lockKeyOf(key));
    const killedAt = epochMs();
    holder.process.kill('SIGKILL');
    const gotBeforeKill = settled;
    const status = await holder.process.exited;
    const lock = await next;
    const recoveredAt = epochMs();
    expect(status.signal).toBe('SIGKILL');
    expect(gotBeforeKill).toBe(false);
    expect(lock.fencingToken).toBeGreaterThan(victim.token);
    expect((await env.store.write(key, lock.fencingToken, 'next')).accepted).toBe(true);
    expect(await lock.release()).toBe(true);
    return {
      recoveryMs: recoveredAt - killedAt,
      pttlAtKill,
      afterExpiryMs: recoveredAt - killedAt - pttlAtKill,
    };
  } finally {
    await engine.close();
    await holder.stop();
  }
}

describe('scenario 2: holder killed with SIGKILL', () => {
  it('gives the lock to the next holder after a killed watchdog holder’s lease runs out', async () => {
    const rounds = [];
    for (let i = 0; i < 3; i++) rounds.push(await crashRound(`crash:watchdog:${i}`, undefined));
    expect(rounds).toHaveLength(3);
    await expectCleanRedis(env.admin);
    figures.record('2-holder-sigkill-watchdog', {
      title: `Holder SIGKILLed (watchdog lease ${WATCHDOG_LEASE_MS} ms, renewed every ${RENEW_EVERY_MS} ms)`,
      recoveryMs: summarize(rounds.map((r) => r.recoveryMs)),
      leaseLeftAtKillMs: summarize(rounds.map((r) => r.pttlAtKill)),
      grantAfterExpiryMs: summarize(rounds.map((r) => r.afterExpiryMs)),
    });
  });

  it('gives the lock to the next holder after a killed fixed-lease holder’s lease runs out', async () => {
    const rounds = [];
    for (let i = 0; i < 2; i++) rounds.push(await crashRound(`crash:fixed:${i}`, 1500));
    expect(rounds).toHaveLength(2);
    await expectCleanRedis(env.admin);
    figures.record('2-holder-sigkill-fixed', {
      title: 'Holder SIGKILLed (fixed lease 1500 ms)',
      recoveryMs: summarize(rounds.map((r) => r.recoveryMs)),
      leaseLeftAtKillMs: summarize(rounds.map((r) => r.pttlAtKill)),
      grantAfterExpiryMs: summarize(rounds.map((r) => round1(r.afterExpiryMs))),
    });
  });
});
