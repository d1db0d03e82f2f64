/*
 * One key, one lock per kind (issue 18, point 5; docs/GUARANTEES.md): the mutex/token lock, the
 * read-write lock, the fair lock and the semaphore named by one key are separate locks, each with
 * its own fencing counter. So a cohort's reserved tokens never interleave with another kind's
 * grants: within each lock, tokens strictly increase in grant order.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import { uniqueKey, useLockEnv } from '../support/lock-env';

const PREFIX = 'kinds:';
const space = new KeySpace(PREFIX);
const env = useLockEnv({ keyPrefix: PREFIX });

describe('kinds on one key', () => {
  it('are separate locks with separate fencing counters: tokens increase in grant order within each', async () => {
    const a = env.engine();
    const b = env.engine();
    const key = uniqueKey('ns');
    const mutexFence = space.names(key).fence;
    // A cohort grant reserves tokens for local hand-offs.
    const first = await a.acquire(key, { waitMs: 0 });
    const reservedUpTo = Number(await env.admin.get(mutexFence));
    expect(reservedUpTo).toBeGreaterThan(first.fencingToken);

    // Another kind on the same key is another lock: granted, with its own counter.
    const write = await b.acquire(key, { mode: 'write', waitMs: 0 });
    const sem = await b.acquire(key, { limit: 1, waitMs: 0 });
    const fair = await b.acquire(key, { fair: true, waitMs: 0 });
    expect(Number(await env.admin.get(mutexFence))).toBe(reservedUpTo);
    for (const kind of ['rw', 'sem', 'fair'] as const) {
      expect(space.names(key, kind).fence).not.toBe(mutexFence);
      expect(await env.admin.exists(space.names(key, kind).fence)).toBe(1);
    }

    // The mutex's next holders (a local hand-off, then a fresh grant elsewhere) follow its own order.
    const next = a.acquire(key, { waitMs: 10_000 });
    expect(await first.release()).toBe(true);
    const handed = await next;
    expect(handed.fencingToken).toBeGreaterThan(first.fencingToken);
    const later = b.acquire(key, { waitMs: 10_000 });
    expect(await handed.release()).toBe(true);
    const fresh = await later;
    expect(fresh.fencingToken).toBeGreaterThan(Math.max(handed.fencingToken, reservedUpTo));

    // And the other kinds' tokens increase within their own lock.
    expect(await write.release()).toBe(true);
    const write2 = await a.acquire(key, { mode: 'write', waitMs: 0 });
    expect(write2.fencingToken).toBeGreaterThan(write.fencingToken);
    for (const h of [write2, sem, fair, fresh]) expect(await h.release()).toBe(true);
  });
});
