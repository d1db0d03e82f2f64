/*
 * minHoldMs (ShedLock's lockAtLeastFor, the default of scheduled methods with onBusy: 'skip'): a
 * release before it shortens the lease so the lock ends at grant + minHoldMs, instead of deleting
 * it. A watchdog round that runs while that release is on its way must not renew the lock to a
 * full watchdog lease afterwards: that kept a 1 s cron job's lock 30 s in 3 replica processes, and
 * every replica skipped the ticks in between. Here 300 ms of latency on a loopback TCP proxy keeps
 * the release in flight while the round (every second) comes due.
 */
import { KeySpace } from '../../lib/core/kinds/key-space';
import { sleep, waitUntil } from '../support/wait';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { TcpProxy } from '../support/tcp-proxy';

const PREFIX = 'minhold:';
const keys = new KeySpace(PREFIX);
const env = useLockEnv({ keyPrefix: PREFIX });
let proxy: TcpProxy;

beforeEach(async () => {
  proxy = await TcpProxy.start(env.server.port);
});
afterEach(async () => {
  await env.cleanup();
  await proxy.close();
});

describe('minHoldMs', () => {
  it('keeps the lock until grant + minHoldMs, and no watchdog round stretches it afterwards', async () => {
    const engine = env.engine({ redis: proxy.url, watchdogLeaseMs: 6_000, renewEveryMs: 1_000 });
    const other = env.engine();
    await (await engine.acquire(uniqueKey('warm'))).release(); // connected before the latency
    const key = uniqueKey('job');
    const lock = keys.names(key).lock;

    const handle = await engine.acquire(key, { minHoldMs: 4_000 });
    await sleep(700); // the watchdog's first round comes due at about 1 s
    proxy.latency(300);
    expect(await handle.release()).toBe(true); // in flight from ~0.7 s to ~1.3 s
    proxy.heal();

    // The lock stays, for what is left of the 4 s (counted from when Redis ran the release, which
    // the latency delays): never for a fresh 6 s watchdog lease.
    const pttl = await env.admin.pttl(lock);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThan(4_000);
    expect(await other.tryAcquire(key)).toBeNull();
    await sleep(1_500); // past another round of the watchdog
    expect(await env.admin.pttl(lock)).toBeLessThan(4_000 - 1_000);

    // Then it ends by itself, and the next caller gets it.
    await waitUntil(async () => (await env.admin.exists(lock)) === 0, { description: 'the lock to expire' });
    const next = await other.tryAcquire(key);
    expect(next).not.toBeNull();
    await next!.release();
  });
});
