import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { HostPort } from './topology-utils';

/** Either kind of ioredis client; cluster helpers look at every node. */
export type AnyRedisClient = Redis | Cluster;

/** One connection from `CLIENT LIST` (all values are the raw strings). */
export interface ClientInfo {
  id: string;
  addr: string;
  name: string;
  flags: string;
  cmd: string;
  sub: string;
  psub: string;
  /** Sharded subscriptions (Redis 7+). */
  ssub?: string;
  /** `host:port` of the server that listed this connection. */
  server: string;
  [field: string]: string | undefined;
}

/** A plain ioredis client for assertions (maxRetriesPerRequest 1); close it with closeClient(). */
export function redisClient(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, ...options });
}

/** An ioredis Cluster client for assertions (maxRetriesPerRequest 1); close it with closeClient(). */
export function clusterClient(startupNodes: HostPort[], options: ClusterOptions = {}): Cluster {
  return new Cluster(startupNodes, {
    ...options,
    redisOptions: { maxRetriesPerRequest: 1, ...options.redisOptions },
  });
}

/** QUIT with a deadline, then disconnect() regardless, so teardown never hangs on a dead server. */
export async function closeClient(client: AnyRedisClient, timeoutMs = 1000): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  try {
    if (client.status === 'ready') await Promise.race([client.quit().catch(() => undefined), deadline]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

function nodesOf(client: AnyRedisClient, role: 'all' | 'master'): Redis[] {
  return client instanceof Cluster ? client.nodes(role) : [client];
}

function serverOf(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}

/** Every channel from `PUBSUB CHANNELS *` and `PUBSUB SHARDCHANNELS *` (all nodes of a cluster), sorted, unique. */
export async function pubsubChannels(client: AnyRedisClient): Promise<string[]> {
  const channels = new Set<string>();
  for (const node of nodesOf(client, 'all')) {
    for (const sub of ['CHANNELS', 'SHARDCHANNELS'] as const) {
      const reply = (await node.call('PUBSUB', sub, '*')) as unknown[];
      for (const channel of reply) channels.add(String(channel));
    }
  }
  return [...channels].sort();
}

/**
 * The channels locks use (wake-ups), without the engines' force-release notice channels: an engine
 * listens on its own from its first lock call to close(), whatever it holds.
 */
export async function lockChannels(client: AnyRedisClient): Promise<string[]> {
  return (await pubsubChannels(client)).filter((c) => !c.includes('{~inspect}:notice:'));
}

/** Keys matching `pattern` (SCAN over every master) whose PTTL is -1, i.e. that never expire. */
export async function keysWithoutTtl(client: AnyRedisClient, pattern = '*'): Promise<string[]> {
  const result: string[] = [];
  for (const node of nodesOf(client, 'master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        if ((await node.pttl(key)) === -1) result.push(key);
      }
    } while (cursor !== '0');
  }
  return result.sort();
}

/** Parses the text of `CLIENT LIST` ("k=v k=v" per line). */
export function parseClientList(text: string, server = ''): ClientInfo[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const info: Record<string, string> = { server };
      for (const pair of line.split(' ')) {
        const eq = pair.indexOf('=');
        if (eq > 0) info[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return info as ClientInfo;
    });
}

/**
 * Connections from `CLIENT LIST` (of every node of a cluster). The querying connection
 * itself is left out unless `includeSelf` is set.
 */
export async function listClients(
  client: AnyRedisClient,
  options: { includeSelf?: boolean } = {},
): Promise<ClientInfo[]> {
  const result: ClientInfo[] = [];
  for (const node of nodesOf(client, 'all')) {
    const selfId = String(await node.client('ID'));
    const clients = parseClientList(String(await node.client('LIST')), serverOf(node));
    result.push(...clients.filter((c) => options.includeSelf || c.id !== selfId));
  }
  return result;
}
