/*
 * One reply shape whatever the protocol: a script returning integers, strings, nil, Lua booleans
 * (RESP3 sends them as booleans, RESP2 as nil / 1), nested arrays, a redis.call() reply and an
 * XREVRANGE entry comes back through every family's door exactly as through ioredis on RESP2, and
 * plain commands (PING, INFO, a MULTI/EXEC with a failing command) too.
 */
import { doorForClient } from '../../lib/core/redis/redis-client';
import type { RedisDoor } from '../../lib/core/redis/redis-door';
import type { LuaScript } from '../../lib/core/redis/script-library';
import { closeClient, redisClient } from '../support/redis-assertions';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { ClientFactory, FAMILIES } from '../support/client-families';

const SOURCE = `
redis.call('DEL', KEYS[1])
redis.call('XADD', KEYS[1], '1-1', 'f', 'v')
return {1, -2, 'text', false, true, {3, false, {'deep'}}, redis.call('GET', KEYS[1] .. ':none'),
  redis.call('XREVRANGE', KEYS[1], '+', '-'), tonumber(ARGV[1]) + 1}`;
const SCRIPT = { name: 'shape-probe', source: SOURCE, sha: '' } as LuaScript;
const SEND = { reload: true, readOnly: false, batch: false };

let server: RedisServerProcess;
let admin: ReturnType<typeof redisClient>;
let expected: unknown;

beforeAll(async () => {
  server = await startRedis();
  admin = redisClient(server.url, { protocol: 2 } as never);
  expected = await admin.eval(SOURCE, 1, 'shape:{k}', 41);
});

afterAll(async () => {
  await closeClient(admin);
  await server?.stop();
});

describe.each(FAMILIES)('%s', (family) => {
  const clients = new ClientFactory(family);
  let door: RedisDoor;
  beforeAll(async () => {
    door = doorForClient((await clients.standalone(server.url)) as never);
  });
  afterAll(() => clients.closeClients());

  it('returns script replies in the RESP2 shape', async () => {
    expect(expected).toEqual([1, -2, 'text', null, 1, [3, null, ['deep']], null, [['1-1', ['f', 'v']]], 42]);
    expect(await door.script(SCRIPT, ['shape:{k}'], [41], SEND)).toEqual(expected);
  });

  it('returns PING, INFO and a transaction with a failed command in one shape', async () => {
    expect(await door.command(['PING'])).toBe('PONG');
    expect(String(await door.command(['INFO', 'server']))).toMatch(/^redis_version:/m);
    const replies = await door.transaction(
      [
        ['SET', 'shape:{t}', 'x'],
        ['HSET', 'shape:{t}', 'f', 'v'], // WRONGTYPE at EXEC
        ['EXISTS', 'shape:{t}'],
      ],
      'shape:{t}',
    );
    expect(replies[0]).toBe('OK');
    expect(replies[1]).toBeInstanceOf(Error);
    expect((replies[1] as Error).message).toMatch(/^WRONGTYPE/);
    expect(replies[2]).toBe(1);
  });
});
