/*
 * What differs between the servers of the matrix (docs/SERVERS.md, "What differs"), asserted on the server
 * this run has (REDIS_SERVER_BIN: Redis 7.0, Redis 8.0 or Valkey 8.1; scripts/test-servers.cjs runs it on
 * each), each with what the library does about it:
 *
 *   - the name and version in INFO server: Valkey adds valkey_version and server_name and keeps
 *     redis_version:7.2.4, which is what the library reads to choose sharded pub/sub on a Cluster;
 *   - CLIENT SETINFO (Redis 7.2+, Valkey): clients send it on connect, CLIENT INFO shows lib-name, and the
 *     ACL rule for it exists there only (Redis 7.0 refuses the whole ACL SETUSER);
 *   - HELLO 3 (RESP3) names the server and its version;
 *   - Lua 5.1 and script flags (`#!lua flags=no-writes`, EVAL_RO) behave alike on all three; Valkey adds a
 *     `server` global beside `redis` (the library's scripts use `redis` only);
 *   - per-field hash expiry (HPEXPIRE) exists on Redis 7.4+ and Valkey 9+ only: the library does not use it;
 *   - Sentinel runs as `<server> <conf> --sentinel` and answers the commands the clients ask; Valkey adds
 *     `GET-PRIMARY-ADDR-BY-NAME` and keeps `get-master-addr-by-name`, which the clients send.
 */
import { createClient } from 'redis';
import { hasShardedPubSub } from '../../lib/core/topology/cluster-pubsub';
import { createLockEngine } from '../../lib/core';
import { hasClientSetinfo, parseServerIdentity, type ServerIdentity } from '../support/documented-acl';
import { closeClient, redisClient } from '../support/redis-assertions';
import { parseInfo, redisCommand } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { startSentinel } from '../support/redis-topologies';

let server: RedisServerProcess;
let infoServer: string;
let identity: ServerIdentity;

beforeAll(async () => {
  server = await startRedis();
  infoServer = String(await redisCommand(server.port, ['INFO', 'server']));
  identity = parseServerIdentity(infoServer);
  process.stdout.write(`server-differences on ${identity.engine} ${identity.version}\n`);
});
afterAll(async () => {
  await server?.stop();
});

it('names itself in INFO server, and reads as a version with sharded pub/sub', () => {
  const info = parseInfo(infoServer);
  if (identity.engine === 'valkey') {
    expect(info.server_name).toBe('valkey');
    // Kept for clients that read redis_version: the library's Cluster check reads it too.
    expect(info.redis_version).toBe('7.2.4');
  } else {
    expect(info.valkey_version).toBeUndefined();
    expect(info.redis_version).toBe(identity.version);
  }
  expect(hasShardedPubSub(infoServer)).toBe(identity.major >= 7);
});

it('knows CLIENT SETINFO, and the ACL rule for it, from Redis 7.2 on and on Valkey', async () => {
  // Sent one at a time, each awaited as it is made: a refusal is never left unhandled.
  const setinfo = () => redisCommand(server.port, ['CLIENT', 'SETINFO', 'LIB-NAME', 'probe']);
  const rule = () => redisCommand(server.port, ['ACL', 'SETUSER', 'setinfo-probe', '+client|setinfo']);
  if (hasClientSetinfo(identity)) {
    await expect(setinfo()).resolves.toBe('OK');
    await expect(rule()).resolves.toBe('OK');
    // What ioredis sends on connect is accepted: CLIENT INFO shows its name.
    const client = redisClient(server.url);
    try {
      await client.ping();
      expect(String(await client.call('CLIENT', 'INFO'))).toMatch(/ lib-name=ioredis /);
    } finally {
      await closeClient(client);
    }
  } else {
    await expect(setinfo()).rejects.toThrow(/unknown subcommand/i);
    await expect(rule()).rejects.toThrow(/Unknown command or category name in ACL/);
  }
});

it('describes a connection with the CLIENT INFO fields of its version', async () => {
  const line = String(await redisCommand(server.port, ['CLIENT', 'INFO']));
  const fields = new Set(
    line
      .trim()
      .split(' ')
      .map((pair) => pair.slice(0, pair.indexOf('='))),
  );
  // What every version has, and the harness reads (test/support/redis-assertions.ts parses by name).
  for (const name of ['id', 'addr', 'name', 'cmd', 'user', 'resp']) expect(fields).toContain(name);
  expect(fields.has('lib-name')).toBe(hasClientSetinfo(identity));
  expect(fields.has('io-thread')).toBe(identity.engine === 'redis' && identity.major >= 8);
  expect(fields.has('tot-net-in')).toBe(identity.engine === 'valkey');
});

it('answers HELLO 3 with its own name and version, and takes locks over RESP3', async () => {
  const client = createClient({ url: server.url, RESP: 3 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const hello = (await client.sendCommand(['HELLO', '3'])) as unknown as
      Map<string, unknown> | Record<string, unknown>;
    const field = (name: string): unknown => (hello instanceof Map ? hello.get(name) : hello[name]);
    expect(field('server')).toBe(identity.engine);
    expect(field('proto')).toBe(3);
    expect(String(field('version'))).toBe(identity.version);
    // Redis 8 lists the module built into it (vector sets); 7.0 and Valkey 8.1 none.
    const modules = JSON.stringify(field('modules'));
    expect(modules.includes('vectorset')).toBe(identity.engine === 'redis' && identity.major >= 8);
    const engine = createLockEngine({ redis: client as never, keyPrefix: 'resp3:' });
    try {
      const handle = await engine.acquire('k', { waitMs: 1_000 });
      await handle.extend(2_000);
      expect(await handle.release()).toBe(true);
    } finally {
      await engine.close();
    }
  } finally {
    await client.close();
  }
});

it('runs Lua 5.1, with script flags and EVAL_RO alike', async () => {
  expect(await redisCommand(server.port, ['EVAL', 'return _VERSION', 0])).toBe('Lua 5.1');
  expect(await redisCommand(server.port, ['EVAL', '#!lua flags=no-writes\nreturn 1', 0])).toBe(1);
  // A script without flags may write (the library's scripts are of this kind); EVAL_RO may not.
  expect(
    await redisCommand(server.port, ['EVAL', "return redis.call('SET', KEYS[1], 'v')", 1, 'flags:w']),
  ).toBe('OK');
  await expect(
    redisCommand(server.port, ['EVAL_RO', "return redis.call('SET', KEYS[1], 'v')", 1, 'flags:w']),
  ).rejects.toThrow(/Write commands are not allowed from read-only scripts/);
  const serverGlobal = redisCommand(server.port, ['EVAL', 'return type(server)', 0]);
  if (identity.engine === 'valkey') await expect(serverGlobal).resolves.toBe('table');
  else await expect(serverGlobal).rejects.toThrow(/nonexistent global variable 'server'/);
});

it('has per-field hash expiry (HPEXPIRE) on Redis 7.4+ and Valkey 9+ only', async () => {
  const info = (await redisCommand(server.port, ['COMMAND', 'INFO', 'HPEXPIRE'])) as unknown[];
  const expected =
    identity.engine === 'valkey'
      ? identity.major >= 9
      : identity.major > 7 || (identity.major === 7 && identity.minor >= 4);
  expect(info[0] !== null).toBe(expected);
});

describe('Sentinel', () => {
  it('runs as the server binary with --sentinel and names the master to clients', async () => {
    const group = await startSentinel({ replicas: 0, sentinels: 1, quorum: 1 });
    try {
      const sentinel = group.sentinels[0]!;
      const addr = (await redisCommand(sentinel.port, [
        'SENTINEL',
        'get-master-addr-by-name',
        group.masterName,
      ])) as string[];
      expect(Number(addr[1])).toBe(group.master.port);
      const primary = redisCommand(sentinel.port, ['SENTINEL', 'GET-PRIMARY-ADDR-BY-NAME', group.masterName]);
      if (identity.engine === 'valkey') expect(await primary).toEqual(addr);
      else await expect(primary).rejects.toThrow(/unknown subcommand/i);
      const info = parseInfo(String(await redisCommand(sentinel.port, ['INFO', 'server'])));
      expect(info.redis_mode ?? info.server_mode).toBe('sentinel');
      if (identity.engine === 'valkey') expect(info.valkey_version).toBe(identity.version);
      // Valkey's sentinel still says master in INFO, which some tools parse.
      const sentinelInfo = parseInfo(String(await redisCommand(sentinel.port, ['INFO', 'sentinel'])));
      expect(sentinelInfo.master0).toMatch(new RegExp(`^name=${group.masterName},status=ok,`));
    } finally {
      await group.stop();
    }
  });
});
