/*
 * Multi-key locks on a real Redis Cluster (3 masters): keys of one slot are taken in one script
 * call on that slot's master, keys in different slots are taken slot group by slot group, a
 * failure in a later group gives back the earlier ones, and processes locking [a, b] / [b, a]
 * across slots and random subsets neither deadlock nor lose updates.
 *
 * @slow a Cluster and worker processes (~17 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
import { Cluster } from 'ioredis';
import { createLockEngine, LockEngine, LockWrongTypeError } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { keySlot } from '../support/cluster-slots';
import { sharedCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { commandCounts, uniqueKey } from '../support/lock-env';
import { expectConsistent, runMultiWorkers } from '../support/multi-workers';

jest.setTimeout(180_000);

const PREFIX = 'mc:';
const space = new KeySpace(PREFIX);
let cluster: RedisClusterTopology;
let admin: Cluster;
let engines: LockEngine[] = [];
let clients: Cluster[] = [];

function connect(): Cluster {
  const client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 3 } });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}
function engine(): LockEngine {
  const e = createLockEngine({ redis: connect(), keyPrefix: PREFIX });
  engines.push(e);
  return e;
}
/** A user key starting with `base` whose lock lives in `slot`. */
function keyInSlot(slot: number, base: string): string {
  for (let i = 0; ; i++) if (keySlot(space.stem(`${base}${i}`)) === slot) return `${base}${i}`;
}
/** User keys starting with `base`, each in a different slot and on a different master when possible. */
function keysInSlots(base: string, n: number): string[] {
  const found: string[] = [];
  const slots = new Set<number>();
  for (let i = 0; found.length < n; i++) {
    const slot = keySlot(space.stem(`${base}${i}`));
    if (!slots.has(slot)) {
      slots.add(slot);
      found.push(`${base}${i}`);
    }
  }
  return found;
}
const lockName = (key: string): string => space.names(key).lock;
async function heldKeys(keys: string[]): Promise<string[]> {
  const exists = await Promise.all(keys.map((k) => admin.exists(lockName(k))));
  return keys.filter((_, i) => exists[i] === 1);
}
async function scriptCalls(port: number): Promise<number> {
  const counts = await commandCounts(port);
  return (counts.get('evalsha') ?? 0) + (counts.get('eval') ?? 0);
}

beforeAll(async () => {
  cluster = await sharedCluster();
  admin = new Cluster(cluster.startupNodes);
});
afterEach(async () => {
  await Promise.all(engines.map((e) => e.close()));
  clients.forEach((c) => c.disconnect());
  engines = [];
  clients = [];
});
afterAll(async () => {
  admin?.disconnect();
});

it("takes keys that share a slot in one script call on that slot's master", async () => {
  const e = engine();
  const base = uniqueKey('same');
  const slot = keySlot(space.stem(base));
  const keys = [0, 1, 2, 3].map((i) => keyInSlot(slot, `${base}-${i}-`));
  // Warm-up: the slots map, the ACL check and the script cached on that master (a first EVALSHA gets
  // NOSCRIPT). The keys are free; waitMs only widens the first call's deadline on a loaded machine.
  await e
    .acquire([keyInSlot(slot, 'warm-up-a-'), keyInSlot(slot, 'warm-up-b-')], { waitMs: 5_000 })
    .then((h) => h.release());
  const master = await cluster.masterForSlot(slot);
  const before = await scriptCalls(master.port);
  const handle = await e.acquire(keys, { waitMs: 0 });
  const after = await scriptCalls(master.port);
  expect(after - before).toBe(1);
  expect(await heldKeys(keys)).toEqual(keys);
  await handle.release();
  expect(await heldKeys(keys)).toEqual([]);
});

it('takes keys in different slots (on different masters) all or none', async () => {
  const [e, other] = [engine(), engine()];
  const keys = keysInSlots(uniqueKey('spread'), 6);
  const masters = new Set(
    await Promise.all(keys.map(async (k) => (await cluster.masterForKey(lockName(k))).port)),
  );
  expect(masters.size).toBeGreaterThan(1);
  const handle = await e.acquire(keys, { waitMs: 0 });
  expect(await heldKeys(keys)).toEqual([...keys].sort());
  for (const key of keys) expect(await other.tryAcquire(key)).toBeNull();
  const busy = await other.tryAcquire([...keys].reverse());
  expect(busy).toBeNull();
  expect(await handle.release()).toBe(true);
  expect(await heldKeys(keys)).toEqual([]);
  const next = await other.acquire([...keys].reverse(), { waitMs: 0 });
  for (const key of keys) expect(next.fencingTokens[key]!).toBeGreaterThan(handle.fencingTokens[key]!);
  await next.release();
});

it('gives back the groups already taken when a later group holds a foreign key', async () => {
  const e = engine();
  const [first, second] = keysInSlots(uniqueKey('fail'), 2).sort() as [string, string];
  await admin.set(lockName(second), 'user data');
  const err = (await e.acquire([second, first]).catch((x: unknown) => x)) as LockWrongTypeError;
  expect(err).toBeInstanceOf(LockWrongTypeError);
  expect(err.redisKey).toBe(lockName(second));
  expect(await heldKeys([first])).toEqual([]);
  expect(await admin.get(lockName(second))).toBe('user data');
});

it('never deadlocks or loses an update across processes when the keys are in different slots', async () => {
  const label = uniqueKey('mcp');
  const keys = keysInSlots(`${label}:`, 5);
  const common = {
    CLUSTER_NODES: JSON.stringify(cluster.startupNodes),
    KEY_PREFIX: PREFIX,
    DATA_PREFIX: label,
    WAIT_MS: '60000',
  };
  const ab = keys.slice(0, 2).join(',');
  const done = await runMultiWorkers(
    [
      { processes: 1, env: { KEYS: ab, PATTERN: 'ab', REVERSED: '0', CALLERS: '3', ITERATIONS: '120' } },
      { processes: 1, env: { KEYS: ab, PATTERN: 'ab', REVERSED: '1', CALLERS: '3', ITERATIONS: '120' } },
      { processes: 2, env: { KEYS: keys.join(','), PATTERN: 'random', CALLERS: '3', ITERATIONS: '120' } },
    ],
    common,
  );
  await expectConsistent(admin, label, keys, done);
  expect(done.map((d) => d.timeouts)).toEqual([0, 0, 0, 0]);
  expect(done.map((d) => d.lost)).toEqual([0, 0, 0, 0]);
  expect(done.reduce((sum, d) => sum + d.sections, 0)).toBe(4 * 3 * 120);
});
