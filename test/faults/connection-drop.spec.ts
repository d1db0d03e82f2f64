/**
 * Scenario 9: the connection drops in the middle of an acquire or a release. Two ways:
 * - CLIENT KILL while the command is held at the server by CLIENT PAUSE (it has not run yet);
 * - a proxy that lets the command run and then cuts the connection before the reply arrives
 *   (ioredis re-sends unanswered commands after reconnecting, so the script may run twice).
 * Every call must settle with a result or a typed error, and no lock may outlive its lease.
 */
import { LockError, LockHandle } from '../../lib/core';
import { epochMs, round1 } from '../support/clock';
import { TcpProxy } from '../support/tcp-proxy';
import { expectCleanRedis, faultEngine, lockKeyOf, PREFIX } from '../support/fault-engine';
import { useFaultEnv } from '../support/fault-env';
import { faultFigures } from '../support/fault-figures';
import { listClients } from '../support/redis-assertions';
import { sleep, waitUntil } from '../support/wait';
import type Redis from 'ioredis';

const env = useFaultEnv();
const figures = faultFigures();
const LEASE_MS = 3000;

afterEach(async () => {
  await env.admin.client('UNPAUSE');
});

/** Settles `call` into { handle | value | error name }. */
async function outcome<T>(call: Promise<T>): Promise<{ value?: T; error?: Error }> {
  try {
    return { value: await call };
  } catch (error) {
    return { error: error as Error };
  }
}

/** Waits until the lock key is gone, checking on every look that it never lacks a TTL or outlives the lease. */
async function expectGoneWithinLease(admin: Redis, key: string): Promise<number> {
  const started = epochMs();
  const ttls: number[] = [];
  await waitUntil(
    async () => {
      const ttl = await admin.pttl(lockKeyOf(key));
      if (ttl !== -2) ttls.push(ttl);
      return ttl === -2;
    },
    { intervalMs: 5, timeoutMs: LEASE_MS + 15_000, description: `lock ${key} to go` },
  );
  expect(ttls.filter((t) => t < 0 || t > LEASE_MS)).toEqual([]);
  return round1(epochMs() - started);
}

async function killPausedScriptCaller(name: string): Promise<void> {
  const blocked = await waitUntil(
    async () =>
      (await listClients(env.admin)).find(
        (c) => c.name === name && c.flags.includes('b') && /^eval/.test(c.cmd),
      ),
    { description: 'the script call to be held by CLIENT PAUSE' },
  );
  await env.admin.client('KILL', 'ID', blocked.id);
}

describe('scenario 9: connection dropped mid-acquire and mid-release', () => {
  it.each([
    ['reentrant mutex', true],
    ['token lock', false],
  ])(
    'CLIENT KILL before the acquire ran: settles typed and leaves no orphan (%s)',
    async (label, reentrant) => {
      const key = `kill:acquire:${label}`;
      const name = `drop-acquire-${reentrant}`;
      const engine = faultEngine(
        { host: env.redis.host, port: env.redis.port, connectionName: name },
        { commandTimeoutMs: 1000 },
      );
      try {
        await engine.tryAcquire('warm-up', { reentrant }).then((h) => h?.release());
        await env.admin.client('PAUSE', 60_000, 'WRITE');
        const attempt = outcome(engine.acquire(key, { waitMs: 0, leaseMs: LEASE_MS, reentrant }));
        await killPausedScriptCaller(name);
        const result = await attempt;
        await env.admin.client('UNPAUSE');
        expect(result.value !== undefined || result.error instanceof LockError).toBe(true);
        if (result.value) expect(await result.value.release()).toBe(true);
        const goneAfterMs = await expectGoneWithinLease(env.admin, key);
        await expectCleanRedis(env.admin);
        figures.record(`9-client-kill-mid-acquire-${reentrant ? 'mutex' : 'token'}`, {
          title: `CLIENT KILL while the acquire is held by CLIENT PAUSE (${label}, lease ${LEASE_MS} ms)`,
          acquireOutcome: result.value ? 'acquired' : result.error!.name,
          lockGoneAfterSettleMs: goneAfterMs,
        });
      } finally {
        await engine.close();
      }
    },
  );

  it.each([
    ['reentrant mutex', true],
    ['token lock', false],
  ])(
    'CLIENT KILL before the release ran: resolves a boolean and leaves no orphan (%s)',
    async (label, reentrant) => {
      const key = `kill:release:${label}`;
      const name = `drop-release-${reentrant}`;
      const engine = faultEngine(
        { host: env.redis.host, port: env.redis.port, connectionName: name },
        { commandTimeoutMs: 1000 },
      );
      try {
        const lock = await engine.acquire(key, { leaseMs: LEASE_MS, reentrant });
        await env.admin.client('PAUSE', 60_000, 'WRITE');
        const release = outcome(lock.release());
        await killPausedScriptCaller(name);
        const result = await release;
        await env.admin.client('UNPAUSE');
        expect(result.error).toBeUndefined();
        expect(typeof result.value).toBe('boolean');
        const goneAfterMs = await expectGoneWithinLease(env.admin, key);
        await expectCleanRedis(env.admin);
        figures.record(`9-client-kill-mid-release-${reentrant ? 'mutex' : 'token'}`, {
          title: `CLIENT KILL while the release is held by CLIENT PAUSE (${label}, lease ${LEASE_MS} ms)`,
          releaseResult: result.value,
          lockGoneAfterSettleMs: goneAfterMs,
        });
      } finally {
        await engine.close();
      }
    },
  );

  describe('reply lost after the server ran the command', () => {
    let proxy: TcpProxy;
    beforeAll(async () => {
      proxy = await TcpProxy.start(env.redis.port);
    });
    afterAll(async () => {
      await proxy?.close();
    });

    it.each([
      ['reentrant mutex', true],
      ['token lock', false],
    ])(
      'acquire: the re-sent script finds its own grant; no orphan beyond the lease (%s)',
      async (label, reentrant) => {
        const key = `proxy:acquire:${label}`;
        const engine = faultEngine({ host: '127.0.0.1', port: proxy.port }, { commandTimeoutMs: 2000 });
        try {
          await engine.tryAcquire('warm-up', { reentrant }).then((h) => h?.release());
          const dropped = proxy.dropNextReplyTo('evalsha');
          const result = await outcome<LockHandle>(
            engine.acquire(key, { waitMs: 0, leaseMs: LEASE_MS, reentrant }),
          );
          await dropped;
          expect(result.value !== undefined || result.error instanceof LockError).toBe(true);
          if (result.value) expect(await result.value.release()).toBe(true);
          const goneAfterMs = await expectGoneWithinLease(env.admin, key);
          await expectCleanRedis(env.admin);
          figures.record(`9-reply-lost-mid-acquire-${reentrant ? 'mutex' : 'token'}`, {
            title: `Acquire ran, reply lost, connection cut (${label}, lease ${LEASE_MS} ms)`,
            acquireOutcome: result.value ? 'acquired' : result.error!.name,
            lockGoneAfterSettleMs: goneAfterMs,
          });
          // The caller must get the lock it was granted, not be told "busy" by its own orphan.
          expect(result.error).toBeUndefined();
        } finally {
          await engine.close();
        }
      },
    );

    it.each([
      ['reentrant mutex', true],
      ['token lock', false],
    ])('release: resolves a boolean, never throws, and the lock is gone (%s)', async (label, reentrant) => {
      const key = `proxy:release:${label}`;
      const engine = faultEngine({ host: '127.0.0.1', port: proxy.port }, { commandTimeoutMs: 2000 });
      try {
        const lock = await engine.acquire(key, { leaseMs: LEASE_MS, reentrant });
        const lost: string[] = [];
        engine.events.on('lost', (e) => lost.push(e.reason));
        const dropped = proxy.dropNextReplyTo('evalsha');
        const result = await outcome(lock.release());
        await dropped;
        expect(result.error).toBeUndefined();
        expect(typeof result.value).toBe('boolean');
        expect(await env.admin.exists(lockKeyOf(key))).toBe(0);
        await expectCleanRedis(env.admin);
        figures.record(`9-reply-lost-mid-release-${reentrant ? 'mutex' : 'token'}`, {
          title: `Release ran, reply lost, connection cut (${label})`,
          releaseResult: result.value,
          lostEventsAfterRelease: lost,
        });
      } finally {
        await engine.close();
      }
    });

    // An engine listens on its force-release notice channel from its first answered lock call to
    // close(). Here the link drops while the engine holds a lock, and the reconnects' handshakes go
    // unanswered for a while. Once healed, Redis has the engine on its channel exactly once again, the
    // check after the reconnect finds the lock, a force release still reaches the holder, and close()
    // leaves the channel on no connection.
    it('the notice subscription is there once after the connection dropped, and is heard', async () => {
      const engine = faultEngine({ host: '127.0.0.1', port: proxy.port }, { commandTimeoutMs: 500 });
      const operator = faultEngine(env.redis.url);
      const channel = `${PREFIX}{~inspect}:notice:${engine.engineId}`;
      const subscribers = async () => Number((await env.admin.pubsub('NUMSUB', channel))[1]);
      try {
        const held = await engine.acquire('proxy:notice', { leaseMs: 20_000 });
        await waitUntil(async () => (await subscribers()) === 1, {
          description: 'the notice subscription to reach Redis',
        });
        proxy.blackhole('to-client');
        proxy.reset(); // reconnects connect, and their handshakes go unanswered
        for (let attempt = 0; attempt < 4; attempt++) {
          await sleep(400);
          proxy.reset();
        }
        proxy.heal();
        await waitUntil(async () => (await subscribers()) === 1 && (await engine.isLocked('proxy:notice')), {
          description: 'the engine back, on its notice channel',
        });
        expect(held.signal.aborted).toBe(false); // the check after the reconnect found the lock
        expect(await operator.forceRelease('proxy:notice', { reason: 'spec', by: 'ops' })).toBe(true);
        await waitUntil(() => held.signal.aborted, { description: 'the holder told' });
        expect((held.signal.reason as LockError & { reason: string }).reason).toBe('force-released');
        await engine.close();
        await waitUntil(async () => (await subscribers()) === 0, { description: 'the channel dropped' });
        await expectCleanRedis(env.admin, 3000);
      } finally {
        await Promise.all([engine.close(), operator.close()]);
      }
    });
  });
});
