import { startRedis, type RedisServerProcess, type StartRedisOptions } from './redis-server';
import { startAll, stopAll, type HostPort } from './topology-utils';

export { startCluster, waitForClusterHealthy } from './redis-cluster';
export type { RedisClusterTopology, StartClusterOptions } from './redis-cluster';
export { startSentinel, waitForReplicaLink } from './redis-sentinel';
export type { RedisSentinelTopology, StartSentinelOptions } from './redis-sentinel';
export { stopAll } from './topology-utils';
export type { HostPort } from './topology-utils';

/** Independent masters, e.g. for RedLock. */
export interface RedisGroup {
  servers: RedisServerProcess[];
  /** `redis://127.0.0.1:PORT` of each server, in order. */
  urls: string[];
  addresses: HostPort[];
  /** Stops every server. */
  stop(): Promise<void>;
}

/** Starts `n` independent redis-server masters in parallel (all or none: a failure stops the rest). */
export async function startRedisGroup(
  n: number,
  options: Omit<StartRedisOptions, 'port'> = {},
): Promise<RedisGroup> {
  const servers = await startAll(Array.from({ length: n }, () => () => startRedis(options)));
  return {
    servers,
    urls: servers.map((s) => s.url),
    addresses: servers.map((s) => ({ host: s.host, port: s.port })),
    stop: () => stopAll(servers),
  };
}
