import type { Cluster, Redis } from 'ioredis';

/** A connection the engine talks to: a standalone/Sentinel ioredis client or an ioredis Cluster. */
export type RedisClient = Redis | Cluster;

/** True for an ioredis Cluster (duck-typed, so a second copy of ioredis still works). */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/** True when the value looks like an ioredis Redis or Cluster instance. */
export function isRedisClient(value: unknown): value is RedisClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Redis).evalsha === 'function' &&
    typeof (value as Redis).duplicate === 'function'
  );
}
