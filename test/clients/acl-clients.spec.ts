/*
 * The least-privilege ACL of docs/SECURITY.md on every client family: each client connects as a
 * user with exactly the documented rules (what the families send on connect — HELLO 3 for ioredis 6,
 * node-redis 6 and GLIDE, INFO for the ready checks of ioredis, iovalkey and GLIDE — needs nothing
 * more: HELLO is allowed to every user, INFO is in the list), takes, contends for, renews and
 * releases locks, and is woken by a release message; then `ACL LOG` must hold no denial for that user.
 */
import { createLockEngine } from '../../lib/core';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { track } from '../support/lock-env';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { ClientFactory, FAMILIES } from '../support/client-families';

const PREFIX = 'acl:';
/** docs/SECURITY.md: one Redis or a Sentinel-managed master, with the inspection registry. */
const DOCUMENTED = [
  'evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'ping', 'info', 'subscribe', 'unsubscribe', 'publish', 'time',
  'type', 'exists', 'get', 'set', 'del', 'pttl', 'pexpire',
  'hget', 'hmget', 'hset', 'hdel', 'hlen', 'hexists', 'hincrby',
  'multi', 'exec', 'hgetall', 'xadd', 'xrevrange',
  'zadd', 'zrem', 'zrange', 'zrangebyscore', 'zremrangebyscore', 'zcard', 'zscore',
]; // prettier-ignore
let server: RedisServerProcess;
let admin: ReturnType<typeof redisClient>;
const engines: LockEngine[] = [];
const factories: ClientFactory[] = [];

beforeAll(async () => {
  server = await startRedis();
  admin = redisClient(server.url);
});

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await Promise.all(factories.splice(0).map((f) => f.closeClients()));
});

afterAll(async () => {
  await closeClient(admin);
  await server?.stop();
});

describe.each(FAMILIES)('the documented ACL on %s', (family) => {
  it('runs locks, renewals, wake-ups and the registry with no denial in ACL LOG', async () => {
    const username = `locks-${family}`;
    const rules = ['on', '>pw', 'resetkeys', `~${PREFIX}*`, 'resetchannels', `&${PREFIX}*`, '-@all'];
    const commands = DOCUMENTED;
    await admin.call('ACL', 'SETUSER', username, ...rules, ...commands.map((c) => `+${c}`));
    await admin.call('ACL', 'LOG', 'RESET');
    const clients = new ClientFactory(family);
    factories.push(clients);
    const options = { keyPrefix: PREFIX, watchdogLeaseMs: 3000, renewEveryMs: 200 };
    const [a, b] = await Promise.all([
      clients.standalone(server.url, { username, password: 'pw' }),
      clients.standalone(server.url, { username, password: 'pw' }),
    ]);
    const holder = createLockEngine({ ...options, redis: a as never });
    const waiter = createLockEngine({ ...options, redis: b as never });
    engines.push(holder, waiter);
    const held = await holder.acquire('k');
    const waiting = track(waiter.acquire('k', { waitMs: 10_000 }));
    await new Promise((resolve) => setTimeout(resolve, 700)); // renewals, and the registry's write
    expect(held.signal.aborted).toBe(false);
    expect(await held.release()).toBe(true);
    const next = await waiting.result;
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    expect(await next.release()).toBe(true);
    const log = (await admin.call('ACL', 'LOG')) as unknown[][];
    const denied = log.map((entry) => {
      const fields = new Map<string, unknown>();
      for (let i = 0; i < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
      return `${String(fields.get('username'))}: ${String(fields.get('reason'))} ${String(fields.get('object'))}`;
    });
    expect(denied.filter((d) => d.startsWith(`${username}:`))).toEqual([]);
  });
});
