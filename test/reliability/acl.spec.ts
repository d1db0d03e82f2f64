/*
 * Least privilege (RELIABILITY.md scenario 19, issue 18 point 2): the ACL documented in
 * docs/SECURITY.md for a single Redis works for every lock kind, wake-ups and health; removing each
 * command (or the channel pattern) in turn gives a clear LockPermissionError before anything is
 * written — never a key without a TTL, never a half-written lock. The Cluster ACL of docs/SECURITY.md,
 * set on every node, carries a force release across the cluster bus to the holder (issue 25).
 */
import { Cluster } from 'ioredis';
import { createLockEngine } from '../../lib/core';
import { KeySpace } from '../../lib/core/internal';
import { LockLostError, LockPermissionError } from '../../lib/core/errors';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { aclDenials, documentedRules, serverIdentity, setDocumentedUser } from '../support/documented-acl';
import { keysWithoutTtl } from '../support/redis-assertions';
import { redisCommand } from '../support/redis-command';
import { startCluster, type RedisClusterTopology } from '../support/redis-topologies';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import { waitUntil } from '../support/wait';

const env = useLockEnv();
const PREFIX = 'lock:';

/** The minimal ACL of docs/SECURITY.md (single Redis or Sentinel), as ACL SETUSER rules. */
const COMMANDS = [
  'evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'ping', 'info', 'subscribe', 'unsubscribe', 'publish', 'time',
  'type', 'exists', 'get', 'set', 'del', 'pttl', 'pexpire',
  'hget', 'hmget', 'hset', 'hdel', 'hlen', 'hexists', 'hincrby',
  'zadd', 'zrem', 'zrange', 'zrangebyscore', 'zremrangebyscore', 'zcard', 'zscore',
]; // prettier-ignore
/** The inspection registry, force-release notices and operator calls (docs/SECURITY.md). */
const INSPECTION = ['multi', 'exec', 'hgetall', 'xadd', 'xrevrange'];
const minimalRules = (commands: string[], channels = `&${PREFIX}*`): string[] => [
  'on', '>pw', 'resetkeys', `~${PREFIX}*`, 'resetchannels', channels, '-@all',
  ...commands.map((c) => `+${c}`),
]; // prettier-ignore

let seq = 0;
const engines: LockEngine[] = [];
/** Users created with exactly the documented ACL: Redis must deny them nothing (ACL LOG). */
const documentedUsers = new Set<string>();
function engineFor(user: string): LockEngine {
  const engine = createLockEngine({
    redis: `redis://${user}:pw@127.0.0.1:${env.server.port}`,
    keyPrefix: PREFIX,
  });
  engines.push(engine);
  return engine;
}
async function engineAs(rules: string[]): Promise<LockEngine> {
  const user = `locks${++seq}`;
  await env.admin.call('ACL', 'SETUSER', user, ...rules);
  return engineFor(user);
}
/** A user set up as docs/SECURITY.md says for this server: its block, and the per-version one. */
async function documentedEngine(): Promise<LockEngine> {
  const user = `locks${++seq}`;
  documentedUsers.add(user);
  await setDocumentedUser(env.server.port, user, 'single');
  return engineFor(user);
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

async function expectNothingWritten(): Promise<void> {
  expect(await keysWithoutTtl(env.admin, `${PREFIX}*`)).toEqual([]);
  // No lock key left (fencing counters and the inspection registry have TTLs, checked above).
  const lockKeys = (await env.admin.keys(`${PREFIX}*`)).filter((k) => !/:fence|\{~inspect\}/.test(k));
  expect(lockKeys).toEqual([]);
}

describe('the documented minimal ACL', () => {
  it('is the list this spec removes commands from, one at a time', () => {
    const sorted = (rules: string[]): string[] => [...rules].sort();
    expect(sorted(documentedRules('single'))).toEqual(sorted(minimalRules(COMMANDS.concat(INSPECTION))));
  });

  it('runs every lock kind, several keys, wake-ups, the watchdog, health and list()', async () => {
    const engine = await documentedEngine();
    const key = uniqueKey('acl');
    const first = await engine.acquire(key, { waitMs: 0 });
    const waiter = engine.acquire(key, { waitMs: 10_000 });
    setTimeout(() => void first.release(), 100);
    await (await waiter).release();
    for (const options of [
      { mode: 'read' },
      { mode: 'write' },
      { fair: true },
      { limit: 2 },
      { reentrant: false },
    ] as const) {
      const handle = await engine.acquire(uniqueKey('kind'), { ...options, waitMs: 0 });
      await handle.extend(5_000);
      expect(await handle.release()).toBe(true);
    }
    const several = await engine.acquire([uniqueKey('m1'), uniqueKey('m2')], { waitMs: 0 });
    expect(await several.release()).toBe(true);
    expect((await engine.readiness()).ready).toBe(true);
    // A hold long enough to be written to the registry of held locks, and listed from it.
    const long = await engine.acquire(uniqueKey('listed'), { waitMs: 0 });
    await waitUntil(async () => (await engine.list({ match: long.key })).locks.length === 1, {
      description: 'the lock listed',
    });
    expect(await engine.inspect(long.key)).toMatchObject({ key: long.key });
    expect(await long.release()).toBe(true);
    await expectNothingWritten();
  });
});

describe('the documented minimal ACL and a force release', () => {
  it("aborts the holder's signal with 'force-released' through its notice subscription", async () => {
    const engine = await documentedEngine();
    const refusals: unknown[] = [];
    engine.events.on('refusal', (e) => refusals.push(e));
    const admin = createLockEngine({ redis: env.server.url, keyPrefix: PREFIX });
    engines.push(admin);
    // A fixed lease of 60 s: expiry cannot be what aborts the signal within this test.
    const holder = await engine.acquire(uniqueKey('evicted'), { waitMs: 0, leaseMs: 60_000 });
    // Held long enough to be in the registry, whose write subscribes the engine to its notices first.
    await waitUntil(async () => (await admin.list({ match: holder.key })).locks.length === 1, {
      description: 'the holder listed',
    });
    await new Promise((resolve) => setTimeout(resolve, 800));
    const aborted = new Promise<unknown>((resolve) =>
      holder.signal.addEventListener('abort', () => resolve(holder.signal.reason), { once: true }),
    );
    const started = performance.now();
    expect(await admin.forceRelease(holder.key, { reason: 'acl spec' })).toBe(true);
    const reason = (await aborted) as LockLostError;
    const latencyMs = performance.now() - started;
    expect(reason).toBeInstanceOf(LockLostError);
    expect(reason.reason).toBe('force-released');
    // Information, not a bound (2 noisy cores): the notice arrives in milliseconds, not at a renewal.
    process.stdout.write(`force-release notice reached the holder after ${latencyMs.toFixed(1)} ms\n`);
    expect(refusals).toEqual([]);
    expect(await holder.release()).toBe(false);
    await expectNothingWritten();
  });

  it('reports a refused notice subscription and registry write once, as refusal events', async () => {
    // Without MULTI/EXEC, and with a channel rule for the locks' wake-ups only (not `{~inspect}`).
    const engine = await engineAs(
      minimalRules(COMMANDS.concat('hgetall', 'xadd', 'xrevrange'), `&${PREFIX}{[^~]*`),
    );
    const refusals: { what: string; reason: string | undefined }[] = [];
    engine.events.on('refusal', (e) => refusals.push(e));
    const handle = await engine.acquire(uniqueKey('refused'), { waitMs: 0 });
    await waitUntil(() => refusals.length === 2, { description: 'both refusals reported' });
    // Several registry ticks later: still reported once each.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(refusals.map((r) => r.what).sort()).toEqual(['force-release notices', 'lock registry']);
    for (const r of refusals) expect(r.reason).toMatch(/NOPERM/);
    expect(await handle.release()).toBe(true);
  });
});

describe('the documented Cluster ACL and a force release', () => {
  const keys = new KeySpace(PREFIX);
  const USER = 'clusterlocks';
  let cluster: RedisClusterTopology;
  const clients: Cluster[] = [];
  const clusterClient = (auth: { username?: string; password?: string } = {}): Cluster => {
    const client = new Cluster(cluster.startupNodes, { redisOptions: { maxRetriesPerRequest: 3, ...auth } });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  const onEveryNode = (args: string[]) => Promise.all(cluster.nodes.map((n) => redisCommand(n.port, args)));

  beforeAll(async () => {
    cluster = await startCluster({ masters: 3, replicasPerMaster: 0 });
    await Promise.all(cluster.nodes.map((n) => setDocumentedUser(n.port, USER, 'cluster')));
  }, 120_000);
  afterAll(async () => {
    // The engines were closed by afterEach (they do not close a client passed in).
    for (const c of clients.splice(0)) c.disconnect();
    await cluster?.stop();
  });

  it("aborts the holder's signal with 'force-released', the notice crossing nodes", async () => {
    const engine = createLockEngine({
      redis: clusterClient({ username: USER, password: 'pw' }),
      keyPrefix: PREFIX,
    });
    const admin = createLockEngine({ redis: clusterClient(), keyPrefix: PREFIX });
    engines.push(engine, admin);
    const refusals: unknown[] = [];
    engine.events.on('refusal', (e) => refusals.push(e));
    // A first hold, listed in the registry, subscribes the engine to its one notice channel on one node.
    // The engine's first call also connects to the three masters and runs the ACL check: it gets a real
    // wait, not waitMs 0 (401 ms in all, which a loaded machine overran), though nobody holds the key.
    const first = await engine.acquire(uniqueKey('first'), { waitMs: 5_000 });
    const noticeNode = await waitUntil(
      async () => {
        const subscribed = await onEveryNode(['PUBSUB', 'CHANNELS', `${PREFIX}{~inspect}:notice:*`]);
        const at = subscribed.findIndex((channels) => (channels as string[]).length === 1);
        return at >= 0 && cluster.nodes[at]!;
      },
      { timeoutMs: 30_000, description: 'the notice channel subscribed on one node' },
    );
    // The evicted lock lives on another node: its script's PUBLISH reaches the notice channel by the bus.
    let key = '';
    for (let i = 0; ; i++) {
      key = uniqueKey(`evicted${i}`);
      if ((await cluster.masterForKey(keys.names(key).lock)).port !== noticeNode.port) break;
    }
    // A fixed lease of 60 s: expiry cannot be what aborts the signal within this test.
    const holder = await engine.acquire(key, { waitMs: 0, leaseMs: 60_000 });
    await waitUntil(async () => (await admin.list({ match: holder.key })).locks.length === 1, {
      timeoutMs: 30_000,
      description: 'the holder listed',
    });
    const aborted = new Promise<unknown>((resolve) =>
      holder.signal.addEventListener('abort', () => resolve(holder.signal.reason), { once: true }),
    );
    const started = performance.now();
    expect(await admin.forceRelease(holder.key, { reason: 'acl cluster spec' })).toBe(true);
    const reason = (await aborted) as LockLostError;
    const latencyMs = performance.now() - started;
    expect(reason).toBeInstanceOf(LockLostError);
    expect(reason.reason).toBe('force-released');
    // Information, not a bound (2 noisy cores): well inside the 60 s lease, so from the notice.
    process.stdout.write(
      `Cluster: force-release notice reached the holder after ${latencyMs.toFixed(1)} ms\n`,
    );
    expect(refusals).toEqual([]);
    expect(await holder.release()).toBe(false);
    expect(await first.release()).toBe(true);
    // No node denied the documented Cluster user anything.
    const denied = await Promise.all(cluster.nodes.map((n) => aclDenials(n.port)));
    expect(denied.flat().filter((d) => d.startsWith(`${USER}:`))).toEqual([]);
  }, 120_000);
});

describe('one permission less', () => {
  // Each engine's first call connects and runs the ACL check: it gets a real wait, not waitMs 0 (401 ms
  // in all, which a loaded machine overran with a LockRedisError), though nobody holds the keys. A
  // permission error is final at once whatever the wait.
  const FREE_KEY = { waitMs: 5_000 };
  /** Fails with the error's own text when it is not a LockPermissionError. */
  const asPermissionError = (err: unknown): LockPermissionError => {
    expect(err instanceof LockPermissionError ? 'LockPermissionError' : String(err)).toBe(
      'LockPermissionError',
    );
    return err as LockPermissionError;
  };
  // PING is only used by health (readiness), INFO only by ioredis' ready check (optional).
  const needed = COMMANDS.filter((c) => c !== 'ping' && c !== 'info');
  it.each(needed)('without %s: a clear LockPermissionError, nothing written', async (missing) => {
    // Scripts cached by earlier tests would hide a missing EVAL.
    await env.admin.script('FLUSH');
    const engine = await engineAs(minimalRules(needed.filter((c) => c !== missing).concat('ping', 'info')));
    for (const options of [
      {},
      { mode: 'write' },
      { fair: true },
      { limit: 3 },
      { reentrant: false },
    ] as const) {
      const err = asPermissionError(
        await engine.acquire(uniqueKey('minus'), { ...options, ...FREE_KEY }).catch((e: unknown) => e),
      );
      expect(err.denied.join(' ')).toContain(missing.toUpperCase());
      expect(err.message).toMatch(/docs\/SECURITY\.md/);
    }
    await expectNothingWritten();
  });

  it('without the channel pattern: a clear LockPermissionError naming PUBLISH and SUBSCRIBE', async () => {
    const engine = await engineAs(minimalRules(COMMANDS, '&other:*'));
    const err = asPermissionError(
      await engine.acquire(uniqueKey('nochan'), FREE_KEY).catch((e: unknown) => e),
    );
    expect(err.denied.join(' ')).toMatch(/PUBLISH .*SUBSCRIBE/);
    await expectNothingWritten();
  });

  it('without ping: locks work, health says why it is not ready', async () => {
    const engine = await engineAs(minimalRules(COMMANDS.filter((c) => c !== 'ping')));
    const handle = await engine.acquire(uniqueKey('noping'), FREE_KEY);
    expect(await handle.release()).toBe(true);
    const readiness = await engine.readiness();
    expect(readiness.ready).toBe(false);
    expect((readiness as { reason?: string }).reason).toMatch(/NOPERM.*ping/);
  });
});

// Last in the file (tests run in order): over the whole spec, Redis denied the documented user nothing.
it('ACL LOG holds no denial of the documented user', async () => {
  expect(documentedUsers.size).toBeGreaterThan(0);
  const denied = await aclDenials(env.server.port);
  expect(denied.filter((d) => documentedUsers.has(d.slice(0, d.indexOf(':'))))).toEqual([]);
  // Which server this ran on, for the log of a matrix run.
  const server = await serverIdentity(env.server.port);
  process.stdout.write(`ACL LOG checked on ${server.engine} ${server.version}\n`);
});
