/**
 * Scenario 15: the watchdog racing releases (Redisson users' "renewal outlives unlock"). With a
 * renewal round every 10 ms and thousands of acquire/release cycles on a few keys, a round is
 * often in flight while a lock is being released. No renewal may keep a released lock alive, a
 * normal release may never be reported as a loss, and no timer may survive the last lock.
 */
import { epochMs, round1 } from '../support/clock';
import {
  activeResources,
  expectCleanRedis,
  faultEngine,
  leakedResources,
  PREFIX,
} from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';

const env = useFaultEnv();
const figures = faultFigures();
const CYCLES = Number(process.env.RACE_CYCLES ?? 20_000);
const KEYS = 48;

describe('scenario 15: watchdog renewal vs release', () => {
  it(`leaves no lock alive and reports no loss after ${CYCLES} acquire/release cycles with 10 ms renewals`, async () => {
    const baseline = activeResources();
    // A 60 s lease: a key renewed after its release would still be there when we look.
    const engine = faultEngine(env.redis.url, {
      watchdogLeaseMs: 60_000,
      renewEveryMs: 10,
      commandTimeoutMs: 10_000,
    });
    const lost: string[] = [];
    const failedReleases: string[] = [];
    let rounds = 0;
    let renewals = 0;
    engine.events.on('lost', (e) => lost.push(`${e.key}: ${e.reason}`));
    engine.events.on('renewed', (r) => {
      rounds++;
      renewals += r.renewed;
    });
    let abortedSignals = 0;
    let next = 0;
    const started = epochMs();
    try {
      const loop = async (k: number) => {
        while (next < CYCLES) {
          next++;
          const lock = await engine.acquire(`race:${k}`, { waitMs: 60_000 });
          // Hold for 0-3 ms so releases land before, during and after renewal rounds.
          const holdMs = Math.floor(Math.random() * 4);
          if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs));
          if (!(await lock.release())) failedReleases.push(lock.key);
          if (lock.signal.aborted) abortedSignals++;
        }
      };
      await Promise.all(Array.from({ length: KEYS }, (_, k) => loop(k)));
      const elapsed = epochMs() - started;

      expect(await env.admin.keys(`${PREFIX}*:m`)).toEqual([]);
      expect(engine.stats()).toMatchObject({ held: 0, watchdog: 0, waitingLocks: 0 });
      expect(lost).toEqual([]);
      expect(failedReleases).toEqual([]);
      expect(abortedSignals).toBe(0);
      expect(renewals).toBeGreaterThan(0);
      await engine.close();
      const leaked = await leakedResources(baseline);
      expect(leaked).toEqual({});
      await expectCleanRedis(env.admin);
      figures.record('15-watchdog-vs-release', {
        title: `Watchdog (renewal every 10 ms) vs release, ${CYCLES} cycles on ${KEYS} keys`,
        cycles: next,
        renewalRounds: rounds,
        leasesRenewed: renewals,
        lockKeysLeft: 0,
        lossesReported: lost.length,
        leakedHandles: leaked,
        cyclesPerSecond: Math.round(next / (elapsed / 1000)),
        elapsedMs: round1(elapsed),
      });
    } finally {
      await engine.close();
    }
  }, 240_000);
});
