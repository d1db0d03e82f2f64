/*
 * AbortSignal: an already-aborted signal rejects at once and sends nothing; aborting a wait rejects
 * with the signal's own reason and leaves no waiter, subscription or lock behind.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { commandsDuring, nextEvent, track, uniqueKey, useLockEnv } from '../support/lock-env';
import { engineOnConnectedClient } from '../support/refusal';

const PREFIX = 'abort:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv();
let engine: LockEngine;

beforeEach(async () => {
  engine = await engineOnConnectedClient(env, PREFIX);
});

describe('AbortSignal', () => {
  it('rejects at once with the reason of an already-aborted signal, sending nothing', async () => {
    const reason = new Error('caller gave up');
    const controller = new AbortController();
    controller.abort(reason);
    let ran = false;
    const sent = await commandsDuring(env.server.port, async () => {
      const key = uniqueKey('pre-aborted');
      await expect(engine.acquire(key, { signal: controller.signal })).rejects.toBe(reason);
      await expect(engine.tryAcquire(key, { signal: controller.signal })).rejects.toBe(reason);
      await expect(engine.using(key, { signal: controller.signal }, async () => (ran = true))).rejects.toBe(
        reason,
      );
      await expect(engine.acquire(key, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'AbortError',
      });
    });
    expect(ran).toBe(false);
    expect(sent).toEqual({});
  });

  it('rejects a waiting acquire with the signal reason when aborted, and leaves nothing behind', async () => {
    const key = uniqueKey('abort-wait');
    const holder = await engine.acquire(key);
    const controller = new AbortController();
    const reason = new Error('request cancelled');
    const notAcquired = nextEvent(engine, 'notAcquired', (e) => e.key === key);
    const busy = nextEvent(engine, 'contended', (e) => e.key === key);
    const head = track(engine.acquire(key, { waitMs: 600_000, signal: controller.signal }));
    // A second local waiter queues behind the head; its own signal aborts it from the queue.
    const queued = new AbortController();
    const second = track(engine.acquire(key, { waitMs: 600_000, signal: queued.signal }));
    await busy;
    expect(head.settled).toBe(false);

    controller.abort(reason);
    await expect(head.result).rejects.toBe(reason);
    expect(await notAcquired).toMatchObject({ reason: 'aborted' });
    queued.abort('just a string');
    await expect(second.result).rejects.toBe('just a string');

    expect(engine.stats()).toMatchObject({ waitingLocks: 0, channels: 0, held: 1 });
    expect(await holder.release()).toBe(true);
    expect(await env.admin.exists(keys.names(key).lock)).toBe(0);
  });

  it('lets the next local waiter go on when the head is aborted', async () => {
    const key = uniqueKey('abort-head');
    const holder = await engine.acquire(key);
    const controller = new AbortController();
    const busy = nextEvent(engine, 'contended', (e) => e.key === key);
    const head = track(engine.acquire(key, { waitMs: 600_000, signal: controller.signal }));
    const next = track(engine.acquire(key, { waitMs: 600_000 }));
    await busy;
    controller.abort();
    await expect(head.result).rejects.toMatchObject({ name: 'AbortError' });
    await holder.release();
    const handle = await next.result;
    expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(await handle.release()).toBe(true);
  });
});
