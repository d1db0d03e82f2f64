import { LockLostError, LockNotAcquiredError } from '../../../lib/core/errors';
import { nextEvent, whenAborted } from '../../support/lock-env';
import type { BehaviourEnv } from './behaviour-env';
import { freshKey } from './behaviour-env';

/** Ownership, waiting, fencing, leases, the watchdog and release, on the default (mutex) kind. */
export function describeMutexBehaviour(env: () => BehaviourEnv): void {
  describe('reentrant mutex', () => {
    it('re-enters when the same async context asks again, one release per acquire', async () => {
      const engine = env().engine();
      const other = env().engine();
      const key = freshKey('reenter');
      await engine.using(key, {}, async (outer) => {
        const inner = await engine.acquire(key, { waitMs: 0 });
        expect(inner.fencingToken).toBe(outer.fencingToken);
        expect(await inner.release()).toBe(true);
        // One hold is left: still excluded elsewhere.
        expect(await other.tryAcquire(key)).toBeNull();
      });
      const after = await other.tryAcquire(key);
      expect(after).not.toBeNull();
      await after!.release();
    });

    it('excludes a sibling call started outside the critical section, in the same engine', async () => {
      const engine = env().engine();
      const key = freshKey('sibling');
      const held = await engine.acquire(key);
      // Not run inside runInLock/using: a different async context.
      expect(await engine.tryAcquire(key)).toBeNull();
      await held.release();
    });

    it('rejects with LockNotAcquiredError carrying the holder lease when waitMs runs out', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('timeout');
      const held = await a.acquire(key, { leaseMs: 60_000 });
      const err = await b.acquire(key, { waitMs: 30 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockNotAcquiredError);
      expect((err as LockNotAcquiredError).retryAfterMs).toBeGreaterThan(1000);
      await held.release();
    });

    it('carries the holder lease too when the holder is in the same process (a local wait)', async () => {
      const a = env().engine();
      const key = freshKey('timeout-local');
      const held = await a.acquire(key, { leaseMs: 60_000 });
      // Not inside runInLock/using: a caller of another async context, waiting behind the holder.
      const err = await a.acquire(key, { waitMs: 30 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockNotAcquiredError);
      const { retryAfterMs } = err as LockNotAcquiredError;
      expect(retryAfterMs).toBeGreaterThan(1000);
      expect(retryAfterMs).toBeLessThanOrEqual(60_000);
      await held.release();
    });

    it('resolves tryAcquire to null when busy instead of throwing', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('try');
      const held = await a.acquire(key);
      await expect(b.tryAcquire(key)).resolves.toBeNull();
      await expect(b.tryAcquire(key, { reentrant: false })).resolves.toBeNull();
      await held.release();
    });

    it('hands the lock to a waiter when the holder releases', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('handoff');
      const held = await a.acquire(key);
      const contended = nextEvent(b, 'contended', (e) => e.key === key);
      const waiting = b.acquire(key, { waitMs: 20_000 });
      await contended;
      await held.release();
      const next = await waiting;
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      await next.release();
    });

    it('gives fencing tokens that strictly increase across holders, engines and kinds', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('fence');
      const tokens: number[] = [];
      for (const [engine, options] of [
        [a, {}],
        [b, { reentrant: false }],
        [a, { mode: 'write' as const }],
        [b, { limit: 2 }],
        [a, { fair: true }],
        [b, {}],
      ] as const) {
        const h = await engine.acquire(key, options);
        tokens.push(h.fencingToken);
        await h.release();
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    });

    it('aborts the signal with LockLostError when a fixed lease runs out, and frees the key', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('lease');
      const held = await a.acquire(key, { leaseMs: 80 });
      const reason = await whenAborted(held.signal);
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('expired');
      expect(held.isHeld).toBe(false);
      const next = await b.acquire(key, { waitMs: 5_000 });
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      await next.release();
    });

    it('keeps a watchdog lock past several leases while the holder runs', async () => {
      // A renewal every 100 ms of a 500 ms lease: 400 ms of slack for a late round on a loaded host.
      const a = env().engine({ watchdogLeaseMs: 500, renewEveryMs: 100 });
      const b = env().engine();
      const key = freshKey('watchdog');
      const held = await a.acquire(key);
      let rounds = 0;
      // Eight rounds of 100 ms span more than the 500 ms lease (1.6 leases). A lost lock fails at once
      // (no more renewals would come) rather than at the test timeout.
      await new Promise<void>((resolve, reject) => {
        held.signal.addEventListener('abort', () => reject(held.signal.reason), { once: true });
        const onRound = (r: { renewed: number }) => {
          if (r.renewed > 0 && ++rounds === 8) {
            a.events.off('renewed', onRound);
            resolve();
          }
        };
        a.events.on('renewed', onRound);
      });
      expect(held.signal.aborted).toBe(false);
      expect(await b.tryAcquire(key)).toBeNull();
      expect(await held.release()).toBe(true);
    });

    it('makes release idempotent, and false once the lease ran out', async () => {
      const [engine, other] = [env().engine(), env().engine()];
      const key = freshKey('release');
      const h = await engine.acquire(key);
      expect(await h.release()).toBe(true);
      expect(await h.release()).toBe(false);
      const short = await engine.acquire(key, { leaseMs: 40 });
      await whenAborted(short.signal);
      // The client gives up at its own lease end, a hair before the server's: wait for the key to go.
      const next = await other.acquire(key, { waitMs: 5_000 });
      expect(await short.release()).toBe(false);
      expect(await next.release()).toBe(true);
    });

    it('emits acquired, contended, notAcquired, released and lost events', async () => {
      const [a, b] = [env().engine(), env().engine()];
      const key = freshKey('events');
      const acquired = nextEvent(a, 'acquired', (e) => e.key === key);
      const held = await a.acquire(key, { leaseMs: 60_000 });
      expect(await acquired).toMatchObject({
        kind: 'mutex',
        reentered: false,
        fencingToken: held.fencingToken,
      });
      const contended = nextEvent(b, 'contended', (e) => e.key === key);
      const refused = nextEvent(b, 'notAcquired', (e) => e.key === key);
      expect(await b.tryAcquire(key)).toBeNull();
      expect((await contended).retryAfterMs).toBeGreaterThan(0);
      expect(await refused).toMatchObject({ reason: 'timeout', attempts: 1 });
      const released = nextEvent(a, 'released', (e) => e.key === key);
      await held.release();
      expect(await released).toMatchObject({ result: 'released', kind: 'mutex' });
      const lost = nextEvent(b, 'lost', (e) => e.key === key);
      await b.acquire(key, { leaseMs: 30 });
      expect(await lost).toMatchObject({ reason: 'expired' });
    });
  });
}
