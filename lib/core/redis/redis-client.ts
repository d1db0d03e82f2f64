import { IoredisDoor, isIoredisCluster, type IoredisClient } from './adapters/ioredis-door';
import { GlideDoor, isGlide, type GlideLike } from './adapters/glide-door';
import { isNodeRedis, NodeRedisDoor, type NodeRedisLike } from './adapters/node-redis-door';
import type { RedisDoor } from './redis-door';

/** A node-redis (`redis` 5/6) client, Cluster or Sentinel, as far as the type goes (the adapter checks the rest). */
export interface NodeRedisClient {
  sendCommand(...args: never[]): Promise<unknown>;
  connect(): Promise<unknown>;
}

/**
 * An iovalkey `Redis` / `Cluster` (a copy of ioredis' API, with classes of its own, so not
 * assignable to ioredis' types), as far as the type goes.
 */
export interface IovalkeyClient {
  evalsha(...args: never[]): Promise<unknown>;
  duplicate(...args: never[]): unknown;
  readonly status: string;
}

/** A Valkey GLIDE `GlideClient` / `GlideClusterClient`, as far as the type goes. */
export interface GlideClient {
  customCommand(...args: never[]): Promise<unknown>;
  invokeScript(...args: never[]): Promise<unknown>;
}

/**
 * A client the user already has, recognised from the object itself: an ioredis or iovalkey `Redis`
 * / `Cluster`; a node-redis v5/v6 client, Cluster or Sentinel (`createClient`, `createCluster`,
 * `createSentinel`); a Valkey GLIDE `GlideClient` / `GlideClusterClient`. The types of node-redis and
 * GLIDE are matched structurally, so the package's types need neither library.
 */
export type RedisClient = IoredisClient | IovalkeyClient | NodeRedisClient | GlideClient;

/** True when the value is a client of one of the supported families. */
export function isRedisClient(value: unknown): value is RedisClient {
  return typeof value === 'object' && value !== null && doorKind(value) !== undefined;
}

function doorKind(value: object): 'ioredis' | 'node-redis' | 'glide' | undefined {
  const v = value as Record<string, unknown>;
  if (typeof v.evalsha === 'function' && typeof v.duplicate === 'function') return 'ioredis';
  if (isGlide(value)) return 'glide';
  if (isNodeRedis(value)) return 'node-redis';
  return undefined;
}

/**
 * The door on a client the user passed (never closed by the library). `commandsOnly`: the door only
 * sends commands and adds no listener to the client (an engine's door hears its errors and
 * connections, and removes its listeners at close; a fenced store has no close).
 */
export function doorForClient(client: RedisClient, commandsOnly = false): RedisDoor {
  switch (doorKind(client)) {
    case 'glide':
      return new GlideDoor(client as unknown as GlideLike);
    case 'node-redis':
      return new NodeRedisDoor(client as unknown as NodeRedisLike, !commandsOnly);
    default: {
      const io = client as unknown as IoredisClient;
      return new IoredisDoor(io, false, isIovalkey(io) ? 'iovalkey' : 'ioredis');
    }
  }
}

/**
 * iovalkey copies ioredis' API but (0.4) not its sharded subscribers: its Cluster's options have no
 * `shardedSubscribers` default. On a single server the two behave alike.
 */
function isIovalkey(client: IoredisClient): boolean {
  return isIoredisCluster(client) && !('shardedSubscribers' in (client.options as object));
}
