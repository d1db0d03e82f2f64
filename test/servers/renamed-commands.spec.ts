/*
 * Managed services (docs/SERVERS.md, "Managed services"): a redis-server with the administrative commands
 * such services rename or refuse renamed away (`rename-command X ""`), and keyspace notifications off. The
 * library needs none of them, so on every client family each feature works as documented: every lock kind,
 * wake-ups, the watchdog, health, list() / inspect() and a force release that reaches the holder; and nothing
 * is lost (a read-modify-write counter under the lock ends at the number of grants, no key without a TTL).
 * Then a server without scripting (EVAL, EVALSHA and their _RO forms renamed away, as some proxies refuse
 * Lua): every lock call fails with a LockRedisError that names the refused command, and nothing is
 * written.
 */
import { createLockEngine } from '../../lib/core';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { LockLostError, LockRedisError } from '../../lib/core/errors';
import { ClientFactory, FAMILIES } from '../support/client-families';
import { track, uniqueKey } from '../support/lock-env';
import { closeClient, keysWithoutTtl, redisClient } from '../support/redis-assertions';
import { redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { waitUntil } from '../support/wait';

/** What managed services commonly rename or refuse (docs/SERVERS.md lists them). */
const RENAMED = ['CONFIG', 'CLIENT', 'SCRIPT', 'PUBSUB', 'DEBUG', 'KEYS', 'FLUSHALL', 'FLUSHDB', 'MONITOR'];
const renamedAway = (commands: string[]): string[] => commands.flatMap((c) => ['--rename-command', c, '']);
const PREFIX = 'managed:';

const engines: LockEngine[] = [];
const factories: ClientFactory[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await Promise.all(factories.splice(0).map((f) => f.closeClients()));
});

describe('a server with CONFIG, CLIENT, SCRIPT, PUBSUB, DEBUG, KEYS, FLUSH* and MONITOR renamed away', () => {
  let server: RedisServerProcess;
  let admin: ReturnType<typeof redisClient>;
  beforeAll(async () => {
    server = await startRedis({ args: [...renamedAway(RENAMED), '--notify-keyspace-events', ''] });
    admin = redisClient(server.url);
  });
  afterAll(async () => {
    await closeClient(admin);
    await server?.stop();
  });

  it('refuses each of them (the premise)', async () => {
    for (const command of RENAMED) {
      await expect(redisCommand(server.port, [command, 'HELP'])).rejects.toThrow(/unknown command/i);
    }
  });

  describe.each(FAMILIES)('on %s', (family) => {
    it('runs every feature, and loses nothing', async () => {
      const clients = new ClientFactory(family);
      factories.push(clients);
      const options = { keyPrefix: PREFIX, watchdogLeaseMs: 2000, renewEveryMs: 300 };
      const [a, b] = await Promise.all([clients.standalone(server.url), clients.standalone(server.url)]);
      const one = createLockEngine({ ...options, redis: a as never });
      const two = createLockEngine({ ...options, redis: b as never });
      const operator = createLockEngine({ keyPrefix: PREFIX, redis: server.url });
      engines.push(one, two, operator);

      // Every kind, extended and released.
      for (const kind of [{}, { mode: 'read' }, { mode: 'write' }, { fair: true }, { limit: 2 }] as const) {
        const handle = await one.acquire(uniqueKey('kind'), { ...kind, waitMs: 5_000 });
        await handle.extend(5_000);
        expect(await handle.release()).toBe(true);
      }
      // A wake-up: the waiter is granted once the holder releases, with a higher fencing token.
      const key = uniqueKey('woken');
      const held = await one.acquire(key, { waitMs: 5_000 });
      const waiting = track(two.acquire(key, { waitMs: 10_000 }));
      // The watchdog renews past its lease (2 s) while the holder holds; renewals every 0.3 s leave
      // 1.7 s of slack on a loaded machine.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(held.signal.aborted).toBe(false);
      expect(waiting.settled).toBe(false);
      expect(await held.release()).toBe(true);
      const next = await waiting.result;
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      expect(await next.release()).toBe(true);
      expect((await one.readiness()).ready).toBe(true);

      // The operator's view: listed, inspected, force-released; the holder is told.
      const evicted = await one.acquire(uniqueKey('evicted'), { waitMs: 5_000, leaseMs: 60_000 });
      await waitUntil(async () => (await operator.list({ match: evicted.key })).locks.length === 1, {
        timeoutMs: 20_000,
        description: 'the holder listed',
      });
      expect(await operator.inspect(evicted.key)).toMatchObject({ key: evicted.key });
      const aborted = new Promise<unknown>((resolve) =>
        evicted.signal.addEventListener('abort', () => resolve(evicted.signal.reason), { once: true }),
      );
      expect(await operator.forceRelease(evicted.key, { reason: 'renamed-commands spec' })).toBe(true);
      expect(((await aborted) as LockLostError).reason).toBe('force-released');

      // Nothing lost: 2 engines × 15 read-modify-writes of one counter under one lock.
      const counter = `${PREFIX}counter:${family}`;
      const counterKey = uniqueKey('counter');
      const bump = (engine: LockEngine) =>
        engine.using(counterKey, { waitMs: 20_000 }, async () => {
          const value = Number((await redisCommand(server.port, ['GET', counter])) ?? 0);
          await new Promise((resolve) => setImmediate(resolve));
          await redisCommand(server.port, ['SET', counter, value + 1, 'PX', 60_000]);
        });
      await Promise.all(
        [one, two].map(async (engine) => {
          for (let i = 0; i < 15; i++) await bump(engine);
        }),
      );
      expect(await redisCommand(server.port, ['GET', counter])).toBe('30');
      expect(await keysWithoutTtl(admin, `${PREFIX}*`)).toEqual([]);
    }, 60_000);
  });
});

describe('a server without scripting (EVAL, EVALSHA and their _RO forms renamed away)', () => {
  let server: RedisServerProcess;
  let admin: ReturnType<typeof redisClient>;
  beforeAll(async () => {
    server = await startRedis({ args: renamedAway(['EVAL', 'EVALSHA', 'EVAL_RO', 'EVALSHA_RO']) });
    admin = redisClient(server.url);
  });
  afterAll(async () => {
    await closeClient(admin);
    await server?.stop();
  });

  it.each(FAMILIES)(
    'on %s: every call fails with a LockRedisError naming the command, nothing written',
    async (family) => {
      const clients = new ClientFactory(family);
      factories.push(clients);
      const engine = createLockEngine({
        keyPrefix: PREFIX,
        redis: (await clients.standalone(server.url)) as never,
      });
      engines.push(engine);
      for (const kind of [
        {},
        { mode: 'write' },
        { fair: true },
        { limit: 2 },
        { reentrant: false },
      ] as const) {
        const error = (await engine
          .acquire(uniqueKey('noscript'), { ...kind, waitMs: 0 })
          .catch((e: unknown) => e)) as LockRedisError;
        expect(error).toBeInstanceOf(LockRedisError);
        expect(error.message).toMatch(/EVAL/i);
        // For the log (docs/SERVERS.md quotes it).
        if (
          family === 'ioredis' &&
          !('mode' in kind || 'fair' in kind || 'limit' in kind || 'reentrant' in kind)
        ) {
          process.stdout.write(`without scripting: ${error.name}: ${error.message}\n`);
        }
      }
      expect(await keysWithoutTtl(admin, `${PREFIX}*`)).toEqual([]);
      expect((await admin.keys(`${PREFIX}*`)).length).toBe(0);
    },
  );
});
