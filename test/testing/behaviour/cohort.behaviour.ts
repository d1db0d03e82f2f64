import { nextEvent, track } from '../../support/lock-env';
import type { BehaviourEnv } from './behaviour-env';
import { freshKey } from './behaviour-env';

/**
 * Per-process cohorts (the default path of the mutex and the token lock under the watchdog): the
 * in-memory backend runs them as Redis does, so users' unit tests exercise production's hand-offs.
 */
export function describeCohortBehaviour(env: () => BehaviourEnv): void {
  describe('per-process cohorts', () => {
    for (const reentrant of [true, false]) {
      it(`hands the ${reentrant ? 'mutex' : 'token lock'} to a local waiter with a larger token and its own signal`, async () => {
        const engine = env().engine({ cohort: { budgetMs: 60_000 } });
        const key = freshKey('cohort-pass');
        const handedOver: boolean[] = [];
        engine.events.on('acquired', (e) => e.key === key && handedOver.push(e.handedOver === true));
        const first = await engine.acquire(key, { reentrant });
        const queued = nextEvent(engine, 'contended', (e) => e.key === key);
        const second = track(engine.acquire(key, { reentrant, waitMs: 20_000 }));
        await queued;
        expect(await first.release()).toBe(true);
        const next = await second.result;
        expect(handedOver).toEqual([false, true]);
        expect(next.fencingToken).toBeGreaterThan(first.fencingToken);
        expect(next.signal).not.toBe(first.signal);
        expect(first.isHeld).toBe(false);
        expect(await next.release()).toBe(true);
      });
    }

    it('ends a cohort at its bound and lets the other replica, which waited, in first', async () => {
      const a = env().engine({ cohort: { passes: 1, budgetMs: 60_000, yieldMs: 20_000 } });
      const b = env().engine();
      const key = freshKey('cohort-yield');
      const order: string[] = [];
      a.events.on('acquired', (e) => e.key === key && order.push(e.handedOver ? 'a (handed over)' : 'a'));
      b.events.on('acquired', (e) => e.key === key && order.push('b'));
      const a1 = await a.acquire(key);
      const bQueued = nextEvent(b, 'contended', (e) => e.key === key);
      const b1 = track(b.acquire(key, { waitMs: 20_000 }));
      await bQueued; // b's attempt found it busy and recorded that b's process waits
      const aQueued = nextEvent(a, 'contended', (e) => e.key === key);
      const a2 = track(a.acquire(key, { waitMs: 20_000 }));
      await aQueued;
      expect(await a1.release()).toBe(true); // the cohort's one pass: a2 gets it locally
      const held2 = await a2.result;
      const a3Queued = nextEvent(a, 'contended', (e) => e.key === key);
      const a3 = track(a.acquire(key, { waitMs: 20_000 }));
      await a3Queued;
      // The bound is reached: released in Redis and reserved for b, although a3 waits here.
      expect(await held2.release()).toBe(true);
      const bHeld = await b1.result;
      expect(a3.settled).toBe(false);
      expect(await bHeld.release()).toBe(true);
      const held3 = await a3.result;
      expect(order).toEqual(['a', 'a (handed over)', 'b', 'a']);
      expect(held3.fencingToken).toBeGreaterThan(bHeld.fencingToken);
      expect(bHeld.fencingToken).toBeGreaterThan(held2.fencingToken);
      await held3.release();
    });
  });
}
