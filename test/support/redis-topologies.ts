import { hostProcess } from './host-process';
import { startCluster, type RedisClusterTopology } from './redis-cluster';
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

/**
 * A topology shared by the spec files one Jest worker runs: started by the first file that asks, left
 * running between files, SIGKILLed when the worker exits (process-reaper.ts). Only for specs that
 * neither stop, pause, restart, flush nor reshard it, each on a key prefix of its own; they never call
 * its stop(). A start that failed is forgotten, so the next file tries again.
 */
function shared<T extends { servers?: RedisServerProcess[]; nodes?: RedisServerProcess[] }>(
  name: string,
  start: () => Promise<T>,
): Promise<T> {
  const bag = hostProcess as unknown as Record<symbol, Promise<T> | undefined>;
  const key = Symbol.for(`nestjs-distributed-lock.test.shared.${name}`);
  let topology = bag[key];
  if (!topology) {
    topology = start().then((started) => {
      for (const server of started.servers ?? started.nodes ?? []) server.unref();
      return started;
    });
    bag[key] = topology;
    topology.catch(() => {
      if (bag[key] === topology) bag[key] = undefined;
    });
  }
  return topology;
}

/** The 3-master Cluster (no replicas) of this Jest worker (see {@link shared}). */
export function sharedCluster(): Promise<RedisClusterTopology> {
  return shared('cluster-3-masters', () => startCluster({ masters: 3, replicasPerMaster: 0 }));
}

/** The 3 independent masters (RedLock) of this Jest worker (see {@link shared}). */
export function sharedRedisGroup(): Promise<RedisGroup> {
  return shared('redis-group-3', () => startRedisGroup(3));
}
