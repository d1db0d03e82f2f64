import { isRedisClient } from '../../redis/redis-client';
import { assertConnectionOption, type RedisConnectionOption } from '../../redis/redis-connection';
import { assertDuration, assertKnownNames } from '../../options/validation';
import { describe } from '../../errors/message-text';

/**
 * The `redlock` option: independent Redis masters (URLs, ioredis options or clients), as a plain
 * array or as `{ nodes, nodeTimeoutMs, retryJitterMs }`.
 */
export type RedlockOption =
  | readonly RedisConnectionOption[]
  | {
      /** The independent masters; 3 or 5 are usual. No two may be the same server. */
      nodes: readonly RedisConnectionOption[];
      /** Each node's answer is awaited at most this long. Default: min(commandTimeoutMs, 500). */
      nodeTimeoutMs?: number;
      /** After a split vote (no majority granted, no majority busy) wait up to this long at random. Default 50. */
      retryJitterMs?: number;
    };

/** RedLock settings with every default filled in. */
export interface ResolvedRedlockOptions {
  nodes: RedisConnectionOption[];
  nodeTimeoutMs: number;
  retryJitterMs: number;
}

/** Majority of `n` nodes. */
export function quorumOf(n: number): number {
  return Math.floor(n / 2) + 1;
}

/** Validates the `redlock` option (shape, node entries, duplicates) without opening any connection. */
export function resolveRedlockOptions(option: unknown, commandTimeoutMs: number): ResolvedRedlockOptions {
  const long = typeof option === 'object' && option !== null && !Array.isArray(option);
  if (long)
    assertKnownNames(
      option as Record<string, unknown>,
      ['nodes', 'nodeTimeoutMs', 'retryJitterMs'],
      'redlock options',
    );
  const o = (long ? option : { nodes: option }) as {
    nodes: unknown;
    nodeTimeoutMs?: unknown;
    retryJitterMs?: unknown;
  };
  if (!Array.isArray(o.nodes)) {
    throw new TypeError(
      `redlock must be an array of Redis connections (URLs, ioredis options or clients), got ${describe(o.nodes)}`,
    );
  }
  if (o.nodes.length === 0)
    throw new RangeError('redlock needs at least one Redis master (3 or 5 independent masters are usual)');
  const seen = new Map<unknown, number>();
  o.nodes.forEach((node: unknown, i: number) => {
    assertConnectionOption(node, `redlock[${i}]`, 'Redis');
    const id = nodeIdentity(node);
    const first = seen.get(id);
    if (first !== undefined) {
      throw new TypeError(
        `redlock[${i}] is the same Redis server as redlock[${first}]; a quorum needs independent masters`,
      );
    }
    seen.set(id, i);
  });
  const nodeTimeoutMs = o.nodeTimeoutMs ?? Math.min(commandTimeoutMs, 500);
  assertDuration(nodeTimeoutMs, 'redlock.nodeTimeoutMs', 1);
  const retryJitterMs = o.retryJitterMs ?? 50;
  assertDuration(retryJitterMs, 'redlock.retryJitterMs', 0);
  return { nodes: [...(o.nodes as RedisConnectionOption[])], nodeTimeoutMs, retryJitterMs };
}

/** What makes two entries the same server: the instance, or host:port (Sentinel: the master name). */
function nodeIdentity(node: unknown): unknown {
  if (typeof node === 'string') {
    try {
      const url = new URL(node);
      return `${normalHost(url.hostname)}:${url.port || '6379'}/${url.pathname.replace('/', '') || '0'}`;
    } catch {
      return node;
    }
  }
  // Other families' clients (node-redis, GLIDE) keep their address elsewhere: the instance is the identity.
  if (isRedisClient(node) && typeof (node as { evalsha?: unknown }).evalsha !== 'function') return node;
  const options = (isRedisClient(node) ? (node as { options?: unknown }).options : node) as
    | { host?: string; port?: number; db?: number; name?: string; sentinels?: unknown; path?: string }
    | undefined;
  if (!options) return node;
  if (options.sentinels) return `sentinel:${String(options.name)}`;
  if (options.path) return `unix:${options.path}`;
  return `${normalHost(options.host)}:${options.port ?? 6379}/${options.db ?? 0}`;
}

function normalHost(host: string | undefined): string {
  return !host || host === 'localhost' ? '127.0.0.1' : host;
}
