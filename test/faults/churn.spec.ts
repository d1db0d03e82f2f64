/**
 * Scenario 16: churn. 10 000 waiters on 100 busy keys; half of them give up through their
 * AbortSignal, the rest are served one by one as the holders release. Afterwards nothing may be
 * left behind: no waiter, no subscription (locally or in PUBSUB CHANNELS), no abort listener on
 * the callers' signals, no timer or socket beyond the baseline, no lock key in Redis.
 */
import { getEventListeners } from 'events';
import { hostProcess } from '../support/host-process';
import { epochMs, round1 } from '../support/clock';
import { activeResources, expectCleanRedis, faultEngine, leakedResources } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { lockChannels } from '../support/redis-assertions';
import { waitUntil } from '../support/wait';

const env = useFaultEnv();
const figures = faultFigures();
const KEYS = 100;
const WAITERS_PER_KEY = 100;

describe('scenario 16: churn of waiters', () => {
  it(`leaves no waiter, listener, subscription, timer or key after ${KEYS * WAITERS_PER_KEY} waiters, half aborted`, async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    hostProcess.on('warning', onWarning);
    const baseline = activeResources();
    const holders = faultEngine(env.redis.url, { commandTimeoutMs: 10_000 });
    const engine = faultEngine(env.redis.url, { commandTimeoutMs: 10_000 });
    const started = epochMs();
    try {
      const held = await Promise.all(
        Array.from({ length: KEYS }, (_, k) => holders.acquire(`churn:${k}`, { leaseMs: 60_000 })),
      );
      const controllers: AbortController[] = [];
      const waiters: Promise<'served' | 'aborted'>[] = [];
      for (let k = 0; k < KEYS; k++) {
        for (let w = 0; w < WAITERS_PER_KEY; w++) {
          const controller = new AbortController();
          controllers.push(controller);
          waiters.push(
            engine.acquire(`churn:${k}`, { waitMs: 120_000, signal: controller.signal }).then(
              async (lock) => {
                await lock.release();
                return 'served' as const;
              },
              (err: unknown) => {
                if (err !== controller.signal.reason) throw err;
                return 'aborted' as const;
              },
            ),
          );
        }
      }
      await waitUntil(() => engine.stats().waitingLocks === KEYS, {
        timeoutMs: 60_000,
        description: 'every key to have waiters',
      });
      const peak = engine.stats();
      // One shared subscription per key, confirmed by Redis, however many local waiters it has.
      const peakChannels = await waitUntil(
        async () => {
          // Wake-up channels only: each engine holding locks also listens on its force-release notice channel.
          const n = (await lockChannels(env.admin)).length;
          return n === KEYS && n;
        },
        { timeoutMs: 30_000, description: 'one subscription per key' },
      );
      // Abort every other waiter, in a shuffled order, while the locks are still busy.
      const abortedIdx = controllers.map((_, i) => i).filter((i) => i % 2 === 1);
      abortedIdx.sort(() => Math.random() - 0.5);
      for (const i of abortedIdx) controllers[i]!.abort(new Error(`caller ${i} gave up`));
      for (const lock of held) expect(await lock.release()).toBe(true);
      const outcomes = await Promise.all(waiters);
      const elapsed = epochMs() - started;

      expect(outcomes.filter((o) => o === 'served')).toHaveLength((KEYS * WAITERS_PER_KEY) / 2);
      expect(outcomes.filter((o) => o === 'aborted')).toHaveLength((KEYS * WAITERS_PER_KEY) / 2);
      expect(engine.stats()).toEqual({ held: 0, watchdog: 0, waitingLocks: 0, channels: 0, closed: false });
      const listenersLeft = controllers.filter((c) => getEventListeners(c.signal, 'abort').length > 0).length;
      expect(listenersLeft).toBe(0);
      await expectCleanRedis(env.admin);
      await Promise.all([engine.close(), holders.close()]);
      const leaked = await leakedResources(baseline);
      expect(leaked).toEqual({});
      figures.record('16-churn', {
        title: `${KEYS * WAITERS_PER_KEY} waiters on ${KEYS} keys, half aborted`,
        peak: { waitingLocks: peak.waitingLocks, localChannels: peak.channels, redisChannels: peakChannels },
        served: (KEYS * WAITERS_PER_KEY) / 2,
        aborted: (KEYS * WAITERS_PER_KEY) / 2,
        after: { ...engine.stats(), abortListenersLeft: listenersLeft, redisChannels: 0, lockKeys: 0 },
        leakedHandles: leaked,
        maxListenersWarnings: warnings.filter((w) => /MaxListeners/.test(w)).length,
        elapsedMs: round1(elapsed),
      });
      // More than 10 concurrent acquires on one engine must not look like a leak in the user's logs.
      expect(warnings.filter((w) => /MaxListeners/.test(w))).toEqual([]);
    } finally {
      hostProcess.off('warning', onWarning);
      await Promise.all([engine.close(), holders.close()]);
    }
  }, 240_000);
});
