/*
 * prom-client: registerLockMetrics puts the distributed_lock_* metrics on the registry it is given
 * (never the global one) with counts that match the calls, and takes them off again on dispose.
 */
import * as client from 'prom-client';
import { LockRedisError, type LockHandle } from '../../lib/core';
import { PROM_METRICS, registerLockMetrics } from '../../lib/observability';
import { waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';

const env = useLockEnv();

/** The value of the sample line `name{labels}` in the exposition text, or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('registerLockMetrics', () => {
  it('lists the instruments with the right counts on the given registry and leaves the global one alone', async () => {
    const globalBefore = await client.register.metrics();
    const registry = new client.Registry();
    const engine = env.engine({ keyPrefix: 'prom:' });
    const dispose = registerLockMetrics(registry, engine);
    const key = uniqueKey('prom');

    const held = await engine.acquire(key);
    await expect(engine.tryAcquire(key)).resolves.toBeNull();
    await expect(engine.tryAcquire(key)).resolves.toBeNull();
    let text = await registry.metrics();
    expect(sample(text, PROM_METRICS.held)).toBe(1);
    await held.release();
    const leased = await engine.acquire(uniqueKey('prom-lease'), { leaseMs: 100 });
    await whenAborted(leased.signal);

    text = await registry.metrics();
    for (const name of Object.values(PROM_METRICS)) expect(text).toContain(`# TYPE ${name} `);
    expect(sample(text, `${PROM_METRICS.waitSeconds}_count`, 'kind="mutex",outcome="acquired"')).toBe(2);
    expect(sample(text, `${PROM_METRICS.waitSeconds}_count`, 'kind="mutex",outcome="busy"')).toBe(2);
    expect(sample(text, `${PROM_METRICS.holdSeconds}_count`, 'kind="mutex",end="released"')).toBe(1);
    expect(sample(text, `${PROM_METRICS.holdSeconds}_count`, 'kind="mutex",end="lost"')).toBe(1);
    expect(sample(text, PROM_METRICS.acquired, 'kind="mutex"')).toBe(2);
    expect(sample(text, PROM_METRICS.busy, 'kind="mutex"')).toBe(2);
    expect(sample(text, PROM_METRICS.lost, 'kind="mutex",reason="expired"')).toBe(1);
    expect(sample(text, PROM_METRICS.renewalFailures)).toBe(0);
    expect(sample(text, PROM_METRICS.held)).toBe(0);

    expect(await client.register.metrics()).toBe(globalBefore);
    expect(globalBefore).not.toContain('distributed_lock');

    dispose();
    expect(await registry.metrics()).not.toContain('distributed_lock');
  });

  it('counts a renewal that failed on a Redis error, and the loss it caused', async () => {
    const registry = new client.Registry();
    const engine = env.engine({ keyPrefix: 'prom:', renewEveryMs: 100, commandTimeoutMs: 200 });
    const dispose = registerLockMetrics(registry, engine);
    // A watchdog lease. The 200 ms deadline is for the renewal below; on a loaded machine the first
    // acquisition (connect, scripts) can outlast it too, which is not what this test is about.
    let handle: LockHandle | undefined;
    for (let attempt = 1; !handle; attempt++) {
      handle = await engine.acquire(uniqueKey('renew')).catch((err: unknown) => {
        if (attempt >= 10 || !(err instanceof LockRedisError)) throw err;
        return undefined;
      });
    }
    env.server.pause();
    try {
      await whenAborted(handle.signal);
    } finally {
      env.server.resume();
    }
    // The watchdog reports its round (the `renewed` event) just after the losses it caused.
    const text = await waitUntil(async () => {
      const t = await registry.metrics();
      return sample(t, PROM_METRICS.renewalFailures) === 1 && t;
    });
    expect(sample(text, PROM_METRICS.renewalFailures)).toBe(1);
    expect(sample(text, PROM_METRICS.lost, 'kind="mutex",reason="renewal-failed"')).toBe(1);
    expect(sample(text, PROM_METRICS.held)).toBe(0);
    dispose();
  });

  it('refuses a second registration on the same registry and leaves the first intact', async () => {
    const registry = new client.Registry();
    const engine = env.engine({ keyPrefix: 'prom:' });
    const dispose = registerLockMetrics(registry, engine.events);
    expect(() => registerLockMetrics(registry, engine.events)).toThrow(/already been registered/);
    await (await engine.acquire(uniqueKey('twice'))).release();
    const text = await registry.metrics();
    expect(sample(text, PROM_METRICS.acquired, 'kind="mutex"')).toBe(1);
    dispose();
  });

  it('refuses something that is no registry before touching anything', () => {
    const engine = env.engine({ keyPrefix: 'prom:' });
    expect(() => registerLockMetrics({} as never, engine)).toThrow(TypeError);
    expect(engine.events.listenerCount('acquired')).toBe(0);
  });
  it('labels by metricKey and uses the given buckets', async () => {
    const registry = new client.Registry();
    const engine = env.engine({ keyPrefix: 'prom:' });
    const dispose = registerLockMetrics(registry, engine, {
      metricKey: (key) => key.split(':')[0],
      buckets: [0.5, 5],
    });
    await (await engine.acquire(uniqueKey('orders'))).release();
    const leased = await engine.acquire(uniqueKey('carts'), { leaseMs: 100 });
    await whenAborted(leased.signal);
    const text = await registry.metrics();
    dispose();
    expect(
      sample(text, `${PROM_METRICS.waitSeconds}_count`, 'kind="mutex",outcome="acquired",key="orders"'),
    ).toBe(1);
    // Holds and losses carry the key label too (hold time and losses by key prefix).
    expect(
      sample(text, `${PROM_METRICS.holdSeconds}_count`, 'kind="mutex",end="released",key="orders"'),
    ).toBe(1);
    expect(sample(text, `${PROM_METRICS.holdSeconds}_count`, 'kind="mutex",end="lost",key="carts"')).toBe(1);
    expect(sample(text, PROM_METRICS.lost, 'kind="mutex",reason="expired",key="carts"')).toBe(1);
    const waitBuckets = text
      .split('\n')
      .filter((l) => l.startsWith(`${PROM_METRICS.waitSeconds}_bucket`) && l.includes('key="orders"'))
      .map((l) => /le="([^"]+)"/.exec(l)![1]);
    expect(waitBuckets).toEqual(['0.5', '5', '+Inf']);
  });
});
