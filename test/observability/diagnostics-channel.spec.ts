/*
 * node:diagnostics_channel: the engine publishes its lifecycle on `nestjs-distributed-lock:<event>`
 * channels, with the same payloads as `engine.events`, only while someone subscribes.
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { lockChannelName, lockChannels } from '../../lib/observability';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';

const env = useLockEnv();

const EVENTS = ['acquired', 'notAcquired', 'contended', 'released', 'lost'] as const;

/** Subscribes to the lifecycle channels; returns what arrives (event name + payload) and an unsubscribe. */
function listen(key: string): { seen: Array<[string, Record<string, unknown>]>; stop: () => void } {
  const seen: Array<[string, Record<string, unknown>]> = [];
  const handlers = EVENTS.map((event) => {
    const handler = (message: unknown) => {
      const payload = message as Record<string, unknown>;
      if (payload.key === key) seen.push([event, payload]);
    };
    diagnosticsChannel.subscribe(lockChannelName(event), handler);
    return () => diagnosticsChannel.unsubscribe(lockChannelName(event), handler);
  });
  return { seen, stop: () => handlers.forEach((off) => off()) };
}

describe('diagnostics_channel', () => {
  it('names one channel per lifecycle event under nestjs-distributed-lock:', () => {
    expect(lockChannelName('acquired')).toBe('nestjs-distributed-lock:acquired');
    expect(Object.keys(lockChannels).sort()).toEqual(
      ['acquired', 'connection', 'contended', 'lost', 'notAcquired', 'refusal', 'released', 'renewed'].sort(),
    );
    expect(Object.values(lockChannels).some((c) => c.hasSubscribers)).toBe(false);
  });

  it('delivers acquired, contended, notAcquired, released and lost to subscribers', async () => {
    const engine = env.engine({ keyPrefix: 'dc:' });
    const key = uniqueKey('dc');
    const { seen, stop } = listen(key);
    try {
      const held = await engine.acquire(key);
      await expect(engine.tryAcquire(key)).resolves.toBeNull();
      await held.release();
      const leased = await engine.acquire(key, { leaseMs: 100 });
      await whenAborted(leased.signal);

      expect(seen.map(([event]) => event)).toEqual([
        'acquired',
        'contended',
        'notAcquired',
        'released',
        'acquired',
        'lost',
      ]);
      expect(seen[0][1]).toMatchObject({
        key,
        kind: 'mutex',
        reentered: false,
        fencingToken: held.fencingToken,
      });
      expect(seen[2][1]).toMatchObject({ reason: 'timeout', tryOnly: true });
      expect(seen[3][1]).toMatchObject({ result: 'released', fencingToken: held.fencingToken });
      expect(seen[5][1]).toMatchObject({ reason: 'expired', fencingToken: leased.fencingToken });
      expect(seen[5][1].heldMs).toEqual(expect.any(Number));
    } finally {
      stop();
    }
  });

  it('publishes nothing once the last subscriber is gone', async () => {
    const engine = env.engine({ keyPrefix: 'dc:' });
    const key = uniqueKey('dc-off');
    const { seen, stop } = listen(key);
    stop();
    expect(lockChannels.acquired.hasSubscribers).toBe(false);
    await (await engine.acquire(key)).release();
    expect(seen).toEqual([]);
  });
});
