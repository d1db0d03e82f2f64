/*
 * The least-privilege ACL of docs/SECURITY.md on every client family: each client connects as a
 * user with exactly the documented rules for the server it runs on (read from the docs: the block,
 * and `+client|setinfo` since Redis 7.2 and on Valkey, for the CLIENT SETINFO every family sends on
 * connect there; HELLO 3 is allowed to every user, the ready checks' INFO is in the list), takes,
 * contends for, renews and releases locks, and is woken by a release message; then `ACL LOG` must hold
 * no denial for that user.
 */
import { createLockEngine } from '../../lib/core';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { track } from '../support/lock-env';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { ClientFactory, FAMILIES } from '../support/client-families';
import { aclDenials, setDocumentedUser } from '../support/documented-acl';

const PREFIX = 'acl:';
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
    await setDocumentedUser(server.port, username, 'single', PREFIX);
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
    const denied = await aclDenials(server.port);
    expect(denied.filter((d) => d.startsWith(`${username}:`))).toEqual([]);
  });
});
