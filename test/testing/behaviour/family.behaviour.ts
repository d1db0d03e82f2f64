import { LockUpgradeError } from '../../../lib/core/errors';
import type { LockEngine } from '../../../lib/core/engine/lock-engine';
import type { LockHandle } from '../../../lib/core/grant/grant-handle';
import { nextEvent } from '../../support/lock-env';
import type { BehaviourEnv } from './behaviour-env';
import { freshKey } from './behaviour-env';

/** Read-write lock, fair lock and counting semaphore. */
export function describeFamilyBehaviour(env: () => BehaviourEnv): void {
  describe('read-write lock', () => {
    it('lets readers share and keeps a writer out while they hold it', async () => {
      const [a, b, c] = [env().engine(), env().engine(), env().engine()];
      const key = freshKey('rw-share');
      const r1 = await a.acquire(key, { mode: 'read', waitMs: 0 });
      const r2 = await b.acquire(key, { mode: 'read', waitMs: 0 });
      expect(r2.fencingToken).toBeGreaterThan(r1.fencingToken);
      expect(await c.tryAcquire(key, { mode: 'write' })).toBeNull();
      await Promise.all([r1.release(), r2.release()]);
      const w = await c.acquire(key, { mode: 'write', waitMs: 5_000 });
      expect(w.fencingToken).toBeGreaterThan(r2.fencingToken);
      await w.release();
    });

    it('keeps readers and other writers out while a writer holds it', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('rw-excl');
      const w = await a.acquire(key, { mode: 'write' });
      expect(await b.tryAcquire(key, { mode: 'read' })).toBeNull();
      expect(await b.tryAcquire(key, { mode: 'write' })).toBeNull();
      await w.release();
      const r = await b.acquire(key, { mode: 'read', waitMs: 5_000 });
      await r.release();
    });

    it('downgrades: the writer takes the read lock, and others read once the write hold is gone', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('rw-down');
      const w = await a.acquire(key, { mode: 'write' });
      const r = await a.runInLock(w, () => a.acquire(key, { mode: 'read', waitMs: 0 }));
      expect(await w.release()).toBe(true);
      expect(r.isHeld).toBe(true);
      expect(await b.tryAcquire(key, { mode: 'write' })).toBeNull();
      const other = await b.acquire(key, { mode: 'read', waitMs: 5_000 });
      await Promise.all([r.release(), other.release()]);
    });

    it('prefers a waiting writer: new readers wait behind it', async () => {
      const [a, b, c] = [env().engine(), env().engine(), env().engine()];
      const key = freshKey('rw-writer-first');
      const reader = await a.acquire(key, { mode: 'read' });
      const queued = nextEvent(b, 'contended', (e) => e.key === key);
      const writer = b.acquire(key, { mode: 'write', waitMs: 20_000 });
      await queued;
      expect(await c.tryAcquire(key, { mode: 'read' })).toBeNull();
      await reader.release();
      const w = await writer;
      expect(w.fencingToken).toBeGreaterThan(reader.fencingToken);
      await w.release();
      const later = await c.acquire(key, { mode: 'read', waitMs: 5_000 });
      await later.release();
    });

    it('refuses an upgrade from read to write with LockUpgradeError', async () => {
      const engine = env().engine();
      const key = freshKey('rw-up');
      await engine.using(key, { mode: 'read' }, async () => {
        await expect(engine.acquire(key, { mode: 'write', waitMs: 0 })).rejects.toBeInstanceOf(
          LockUpgradeError,
        );
      });
    });
  });

  describe('fair lock', () => {
    it('grants waiters in arrival order across engines', async () => {
      const holderEngine = env().engine();
      const key = freshKey('fair');
      const first = await holderEngine.acquire(key, { fair: true });
      const order: number[] = [];
      const waiters: Promise<void>[] = [];
      for (let i = 0; i < 4; i++) {
        const engine = env().engine();
        // Each waiter is queued (its first attempt answered busy) before the next one arrives.
        const queued = nextEvent(engine, 'contended', (e) => e.key === key);
        waiters.push(
          engine.acquire(key, { fair: true, waitMs: 20_000 }).then(async (h) => {
            order.push(i);
            await h.release();
          }),
        );
        await queued;
      }
      await first.release();
      await Promise.all(waiters);
      expect(order).toEqual([0, 1, 2, 3]);
    });

    it('with fair cohorts grants by process entry, each engine its waiters in order, handed over locally', async () => {
      const cohorts = { cohort: { passes: 32, budgetMs: 60_000, fair: true } };
      const holderEngine = env().engine(cohorts);
      const [a, b] = [env().engine(cohorts), env().engine(cohorts)];
      const key = freshKey('fair-cohort');
      const first = await holderEngine.acquire(key, { fair: true });
      const order: string[] = [];
      const handedOver: boolean[] = [];
      for (const e of [a, b]) e.events.on('acquired', (ev) => handedOver.push(ev.handedOver === true));
      const take = (engine: LockEngine, id: string) =>
        engine.acquire(key, { fair: true, waitMs: 20_000 }).then(async (h) => {
          order.push(id);
          await h.release();
        });
      const queuedA = nextEvent(a, 'contended', (e) => e.key === key);
      const waiters = [take(a, 'a1')];
      await queuedA;
      const queuedB = nextEvent(b, 'contended', (e) => e.key === key);
      waiters.push(take(b, 'b1'));
      await queuedB;
      // Later waiters of a and b queue locally behind their engine's head (one entry per engine).
      waiters.push(take(b, 'b2'), take(a, 'a2'));
      await first.release();
      await Promise.all(waiters);
      expect(order).toEqual(['a1', 'a2', 'b1', 'b2']);
      expect(handedOver).toEqual([false, true, false, true]);
    });
  });

  describe('counting semaphore', () => {
    it('admits at most `limit` holders at once and lets the next in when one leaves', async () => {
      const engines = [env().engine(), env().engine(), env().engine()];
      const key = freshKey('sem');
      const held: LockHandle[] = [];
      for (const e of engines.slice(0, 2)) held.push(await e.acquire(key, { limit: 2, waitMs: 0 }));
      const third: LockEngine = engines[2]!;
      expect(await third.tryAcquire(key, { limit: 2 })).toBeNull();
      const contended = nextEvent(third, 'contended', (e) => e.key === key);
      const waiting = third.acquire(key, { limit: 2, waitMs: 20_000 });
      await contended;
      await held[0]!.release();
      const h = await waiting;
      expect(h.fencingToken).toBeGreaterThan(held[1]!.fencingToken);
      expect(await engines[0]!.tryAcquire(key, { limit: 2 })).toBeNull();
      await Promise.all([h.release(), held[1]!.release()]);
    });

    it('nests a re-entry on the permit it already has', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('sem-re');
      await a.using(key, { limit: 2 }, async () => {
        const inner = await a.acquire(key, { limit: 2, waitMs: 0 });
        // Still one permit taken: another holder fits.
        const other = await b.acquire(key, { limit: 2, waitMs: 0 });
        await Promise.all([inner.release(), other.release()]);
      });
    });
  });
}
