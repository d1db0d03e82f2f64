import type Redis from 'ioredis';
import { closeClient, redisClient } from './redis-assertions';
import { startRedis, type RedisServerProcess, type StartRedisOptions } from './redis-server';
import { FenceOracle } from './fence-oracle';

/** What every fault spec works against: the lock's Redis, an admin client on it, and the fencing oracle on its own Redis. */
export interface FaultEnv {
  redis: RedisServerProcess;
  admin: Redis;
  storeServer: RedisServerProcess;
  store: FenceOracle;
}

/**
 * Starts the lock Redis and the oracle Redis in beforeAll and stops them (and the clients) in
 * afterAll. The returned object is filled in by beforeAll; read it inside tests only.
 */
export function useFaultEnv(options: StartRedisOptions = {}): FaultEnv {
  const env = {} as FaultEnv;
  beforeAll(async () => {
    [env.redis, env.storeServer] = await Promise.all([startRedis(options), startRedis()]);
    env.admin = redisClient(env.redis.url, { maxRetriesPerRequest: 20 });
    env.store = new FenceOracle(env.storeServer.url);
    // Both connections up before any test takes a resource baseline.
    await Promise.all([env.admin.ping(), env.store.client.ping()]);
  }, 60_000);
  afterAll(async () => {
    if (env.admin) await closeClient(env.admin);
    if (env.store) await env.store.close();
    await Promise.allSettled([env.redis?.stop(), env.storeServer?.stop()]);
  }, 60_000);
  return env;
}
