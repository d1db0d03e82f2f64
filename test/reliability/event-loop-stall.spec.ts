/*
 * A stall of the caller's own event loop (a long GC pause, a synchronous stretch of the app, a starved
 * CPU) longer than a command's budget: Redis answered in time, and the reply waits in the socket when
 * the loop turns again. A turn of Node's loop runs its due timers before it reads its sockets, so the
 * command's deadline must not be judged before that read: the call gets its reply, not "Redis did
 * not answer within 401 ms". Real Redis and a real client: the order of a timer and a socket read is
 * Node's, which no simulation has.
 */
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { stallLoop } from '../support/stall-loop';

const env = useLockEnv({ keyPrefix: 'stall:' });
afterEach(() => env.cleanup());

describe('a reply that waited in the socket through an event-loop stall', () => {
  it.each([
    ['a reentrant mutex', {}],
    ['a token lock', { reentrant: false }],
    ['a read lock', { mode: 'read' }],
    ['a semaphore permit', { limit: 2 }],
  ] as const)(
    'grants %s under waitMs 0 after a 700 ms stall past its 401 ms budget',
    async (_label, options) => {
      const engine = env.engine();
      const key = uniqueKey('stalled');
      // Connected, the ACL check and the scripts loaded: the call below sends its one command at once.
      await (await engine.acquire(uniqueKey('warm'), { ...options, waitMs: 5_000 })).release();

      const call = engine.acquire(key, { ...options, waitMs: 0 }).then(
        (handle) => ({ handle }),
        (error: unknown) => ({ error }),
      );
      // After the call's microtasks (the command is written), before any reply is read.
      await new Promise<void>((resolve) => {
        setImmediate(() => {
          stallLoop(700);
          resolve();
        });
      });
      const outcome = await call;
      expect('error' in outcome ? String(outcome.error) : 'granted').toBe('granted');
      const { handle } = outcome as { handle: Awaited<ReturnType<typeof engine.acquire>> };
      expect(await handle.release()).toBe(true);
    },
  );

  it('still times out a command whose reply never comes within its budget, stall or not', async () => {
    const engine = env.engine();
    await (await engine.acquire(uniqueKey('warm'), { waitMs: 5_000 })).release();
    // CLIENT PAUSE holds every write command: the reply comes only after 1.5 s.
    await env.admin.call('CLIENT', 'PAUSE', '1500', 'WRITE');
    try {
      const call = engine.acquire(uniqueKey('paused'), { waitMs: 0 }).catch((e: unknown) => e);
      await new Promise<void>((resolve) => {
        setImmediate(() => {
          stallLoop(700);
          resolve();
        });
      });
      expect(String(await call)).toMatch(/Redis did not answer mutex-acquire within 401 ms/);
    } finally {
      await env.admin.call('CLIENT', 'UNPAUSE');
    }
  });
});
