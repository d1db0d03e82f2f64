/*
 * The subscriber connection after a reconnect. ioredis resubscribes a reconnected subscriber by
 * itself but leaves those SUBSCRIBE/PSUBSCRIBE promises unhandled: an engine closed before Redis
 * answered them left an unhandled rejection ("Connection is closed.") in the user's process, which
 * ends a Node process by default. Here the answer is held back by a loopback TCP proxy while the
 * engine closes; nothing may reject unhandled, and the subscriptions must be back in
 * place after the reconnect (a waiter is woken by a release, a force release reaches the holder).
 *
 * @slow reconnects through a proxy (~14 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
import { LockLostError } from '../../lib/core';
import { redisCommand } from '../support/redis-command';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { TcpProxy } from '../support/tcp-proxy';
import { waitUntil } from '../support/wait';

const env = useLockEnv({ keyPrefix: 'resub:' });
let proxy: TcpProxy;
const unhandled: unknown[] = [];
const record = (reason: unknown): void => void unhandled.push(reason);

beforeEach(async () => {
  proxy = await TcpProxy.start(env.server.port);
  unhandled.length = 0;
  process.on('unhandledRejection', record);
});
afterEach(async () => {
  process.off('unhandledRejection', record);
  await env.cleanup();
  await proxy.close();
});

/** The server's pub/sub connections: id, channels (sub + ssub) and patterns (psub). */
async function subscribers(): Promise<{ id: string; channels: number; patterns: number }[]> {
  const list = String(await redisCommand(env.server.port, ['CLIENT', 'LIST', 'TYPE', 'pubsub']));
  return list
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const field = (name: string): string => line.match(new RegExp(`(?:^| )${name}=(\\S*)`))?.[1] ?? '';
      return {
        id: field('id'),
        channels: Number(field('sub')) + Number(field('ssub') || 0),
        patterns: Number(field('psub')),
      };
    });
}

/**
 * Waits for a subscriber connection, other than those in `before`, with the engine's notice channel
 * and `waits` wake-up channels (notices are a plain SUBSCRIBE since issue 25, no pattern).
 */
async function resubscribed(before: readonly string[], waits = 1): Promise<string[]> {
  const channels = waits + 1;
  return waitUntil(
    async () => {
      const now = await subscribers();
      const fresh = now.filter((s) => !before.includes(s.id) && s.channels >= channels && s.patterns === 0);
      return fresh.length > 0 && now.map((s) => s.id);
    },
    { timeoutMs: 20_000, description: 'a new subscriber connection with its subscriptions back' },
  );
}

describe('a subscriber connection that reconnects', () => {
  it('subscribes again, and closing before Redis answers leaves no unhandled rejection', async () => {
    const engine = env.engine({ redis: proxy.url, commandTimeoutMs: 1_000 });
    const other = env.engine();
    const key = uniqueKey('held');
    const held = await other.acquire(key);
    const waiter = engine.acquire(key, { waitMs: 30_000 });
    waiter.catch(() => undefined); // a failed expectation below must not also leave this unhandled
    const mine = await engine.acquire(uniqueKey('mine')); // its engine's notice channel is subscribed
    // Held to the end: an engine that holds nothing drops its notice subscription (with its registry
    // record, at a 250 ms tick), and the second reconnect below must have that subscription to restore.
    await engine.acquire(uniqueKey('kept'));
    const first = await resubscribed([]);

    proxy.reset(); // every connection through the proxy drops; ioredis reconnects them
    const second = await resubscribed(first);
    // Subscribed again for real: a release wakes the waiter, a force release reaches the holder.
    await held.release();
    const woken = await waiter;
    expect(woken.isHeld).toBe(true);
    expect(await other.forceRelease(mine.key, { reason: 'drill' })).toBe(true);
    expect(((await whenAborted(mine.signal)) as LockLostError).reason).toBe('force-released');
    await woken.release();

    // Now the answer to a resubscription is held back, and the engine closes meanwhile. With 1.5 s
    // of latency each way, the answer is still on its way when Redis shows the subscription.
    proxy.latency(1_500);
    proxy.reset();
    await resubscribed(second, 0); // the waiter is served: only the notice channel (the kept lock) is left
    proxy.blackhole('to-client');
    await engine.close(); // QUIT waits 1 s, then the connection is dropped with the reply held back
    // (the kept lock's release goes unanswered too: its lease ends it)
    proxy.heal();
    await new Promise((resolve) => setTimeout(resolve, 200)); // unhandled rejections surface a tick later
    expect(unhandled).toEqual([]);
  }, 60_000);
});
