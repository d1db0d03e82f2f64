/*
 * Wake-ups by pub/sub on every client family, on one server, also between engines on different
 * families: the backoff is 60 s and the holder's lease 10 min, so nothing but the release's message
 * can end the wait in time (the waiter makes 2 attempts before the release and exactly 1 after).
 * After close, no subscription is left on the server.
 */
import { createLockEngine } from '../../lib/core/public';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { nextEvent, track } from '../support/lock-env';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { ClientFactory, FAMILIES, type Family } from '../support/client-families';

const PREFIX = 'cw:';
const NO_POLLING = {
  keyPrefix: PREFIX,
  backoff: { initialMs: 60_000, maxMs: 60_000 },
  watchdogLeaseMs: 600_000,
};

let server: RedisServerProcess;
let admin: ReturnType<typeof redisClient>;
const factories = new Map<Family, ClientFactory>();
const engines: LockEngine[] = [];

beforeAll(async () => {
  server = await startRedis();
  admin = redisClient(server.url);
});

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await Promise.all([...factories.values()].map((f) => f.closeClients()));
});

afterAll(async () => {
  await closeClient(admin);
  await server?.stop();
});

async function engineOn(family: Family | 'url'): Promise<LockEngine> {
  let redis: unknown = server.url;
  if (family !== 'url') {
    const factory = factories.get(family) ?? new ClientFactory(family);
    factories.set(family, factory);
    redis = await factory.standalone(server.url);
  }
  const engine = createLockEngine({ ...NO_POLLING, redis: redis as never });
  engines.push(engine);
  return engine;
}

const PAIRS: [Family | 'url', Family][] = FAMILIES.flatMap((waiter) => [
  [waiter, waiter] as [Family, Family],
  ['url', waiter] as ['url', Family],
]);

describe.each(PAIRS)('holder on %s, waiter on %s', (holderFamily, waiterFamily) => {
  it('wakes the waiter by the release message, with one attempt after the release', async () => {
    const holderEngine = await engineOn(holderFamily);
    const waiterEngine = await engineOn(waiterFamily);
    const key = `wake-${holderFamily}-${waiterFamily}-${Math.random().toString(36).slice(2)}`;
    const holder = await holderEngine.acquire(key);
    let contended = 0;
    waiterEngine.events.on('contended', (e) => {
      if (e.key === key) contended++;
    });
    const attempts: number[] = [];
    waiterEngine.events.on('acquired', (e) => e.key === key && attempts.push(e.attempts));
    const secondBusy = nextEvent(waiterEngine, 'contended', () => contended === 2);
    const waiter = track(waiterEngine.acquire(key, { waitMs: 600_000 }));
    await secondBusy;
    expect(waiter.settled).toBe(false);

    expect(await holder.release()).toBe(true);
    const handle = await waiter.result;
    expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
    expect(attempts).toEqual([3]);
    expect(await handle.release()).toBe(true);

    await Promise.all(engines.splice(0).map((e) => e.close()));
    expect(await admin.pubsub('CHANNELS', `${PREFIX}*`)).toEqual([]);
  });
});
