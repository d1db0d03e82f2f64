/*
 * What the engine opens for its own life (sockets, subscriptions, timers) is made in its own async
 * context, never in the caller whose call happened to need it first (issue 47): those callbacks run
 * for the engine's life, and whatever they log or trace must not name a request that answered long
 * ago. A lock's loss, though, is told in the context of the call that took the lock.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { redisCommand } from '../support/redis-command';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const env = useLockEnv();
const request = new AsyncLocalStorage<string>();

/** Sockets and timers made while the hook is on, with the request whose context made them. */
function recordResources(): { made: { type: string; request?: string }[]; stop(): void } {
  const made: { type: string; request?: string }[] = [];
  const hook = createHook({
    init(_id, type) {
      if (type === 'TCPWRAP' || type === 'Timeout') made.push({ type, request: request.getStore() });
    },
  }).enable();
  return { made, stop: () => hook.disable() };
}

describe("the engine's own work", () => {
  it('opens its connections, subscriptions and timers in no caller’s context', async () => {
    const engine = env.engine({ watchdogLeaseMs: 1_500, renewEveryMs: 200 });
    const key = uniqueKey('own-context');
    const resources = recordResources();
    try {
      // The engine's first calls: its connection, its watchdog, its deadline timer, its subscriber
      // (a waiter joins the lock's channel), its notice subscription and its registry all start now.
      const held = await request.run('r1', () => engine.acquire(key));
      const waiting = request.run('r2', () => engine.acquire(key, { waitMs: 10_000 }));
      await waitUntil(() => engine.stats().channels === 1, { description: 'the waiter to subscribe' });
      await request.run('r1', () => held.release());
      await (await waiting).release();
      await waitUntil(() => resources.made.some((r) => r.type === 'TCPWRAP'), { description: 'a socket' });
    } finally {
      resources.stop();
    }
    const sockets = resources.made.filter((r) => r.type === 'TCPWRAP');
    expect(sockets.length).toBeGreaterThanOrEqual(2); // the connection and the subscriber
    expect(resources.made.filter((r) => r.request !== undefined)).toEqual([]);
  });

  it('tells a loss in the context of the call that took the lock, whatever found it', async () => {
    const engine = env.engine({ watchdogLeaseMs: 1_500, renewEveryMs: 200, keyPrefix: 'own-ctx:' });
    const first = uniqueKey('first');
    const key = uniqueKey('lost');
    // r1 starts the engine (and, before the fix, its watchdog timer in r1's context).
    await request.run('r1', async () => (await engine.acquire(first)).release());
    const lostIn: (string | undefined)[] = [];
    engine.events.on('lost', () => lostIn.push(request.getStore()));
    const handle = await request.run('r2', () => engine.acquire(key));
    const abortedIn = new Promise<string | undefined>((resolve) =>
      handle.signal.addEventListener('abort', () => resolve(request.getStore())),
    );
    // Gone behind the holder's back: the watchdog's next round finds it.
    const [lockName] = (await redisCommand(env.server.port, ['KEYS', `own-ctx:*${key}*:m`])) as string[];
    await redisCommand(env.server.port, ['DEL', lockName!]);
    await whenAborted(handle.signal);
    expect(await abortedIn).toBe('r2');
    expect(lostIn).toEqual(['r2']);
  });
});
