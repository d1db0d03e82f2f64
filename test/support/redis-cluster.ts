import { execFile } from 'child_process';
import {
  CLUSTER_SLOTS,
  keySlot,
  ownerOfSlot,
  parseClusterNodes,
  type ClusterNodeEntry,
} from './cluster-slots';
import { getFreeClusterPorts, LOCALHOST } from './free-port';
import { redisCommand, redisInfo } from './redis-command';
import { startRedis, type RedisServerProcess } from './redis-server';
import { startAll, stopAll, type HostPort } from './topology-utils';
import { waitUntil } from './wait';

/** Binary used for `--cluster create`; override with REDIS_CLI_BIN. */
export const REDIS_CLI_BIN = process.env.REDIS_CLI_BIN ?? 'redis-cli';

/** Options for {@link startCluster}. */
export interface StartClusterOptions {
  /** At least 3 (a redis-cli requirement); default 3. */
  masters?: number;
  /** Default 1. */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`; default 2000 ms. */
  nodeTimeoutMs?: number;
  /** Extra redis-server arguments for every node. */
  args?: string[];
  /** Budget for the whole start-up; default 30 s. */
  startTimeoutMs?: number;
}

/** A running Redis Cluster on 127.0.0.1. */
export interface RedisClusterTopology {
  /** Every node in start order (roles may change: ask masters()/replicas()). */
  nodes: RedisServerProcess[];
  /** For `new Cluster(startupNodes)`. */
  startupNodes: HostPort[];
  nodeTimeoutMs: number;
  /** `CLUSTER NODES` as seen by the first node that answers. */
  clusterNodes(): Promise<ClusterNodeEntry[]>;
  /** Nodes currently acting as masters that serve slots. */
  masters(): Promise<RedisServerProcess[]>;
  /** Nodes currently acting as replicas. */
  replicas(): Promise<RedisServerProcess[]>;
  /** The node currently serving `slot`. */
  masterForSlot(slot: number): Promise<RedisServerProcess>;
  /** The node currently serving `key`'s slot (hash tags honoured). */
  masterForKey(key: string | Buffer): Promise<RedisServerProcess>;
  /** The node listening on `port`, if it belongs to this cluster. */
  nodeByPort(port: number): RedisServerProcess | undefined;
  /** Waits until the cluster is healthy: see {@link waitForClusterHealthy} (a stopped node is not). */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  /** Stops every node. */
  stop(): Promise<void>;
}

function redisCli(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(REDIS_CLI_BIN, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`redis-cli ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** One node's health plus a role/slot signature of its view, to compare views between nodes. */
async function nodeHealth(node: RedisServerProcess, nodeCount: number): Promise<string | undefined> {
  const info = await redisInfo(node.port, 'cluster-info', { timeoutMs: 1000 });
  if (info.cluster_state !== 'ok') return undefined;
  if (Number(info.cluster_slots_assigned) !== CLUSTER_SLOTS) return undefined;
  if (Number(info.cluster_known_nodes) !== nodeCount) return undefined;
  const replication = await redisInfo(node.port, 'replication', { timeoutMs: 1000 });
  if (replication.role === 'slave' && replication.master_link_status !== 'up') return undefined;
  const view = parseClusterNodes(
    String(await redisCommand(node.port, ['CLUSTER', 'NODES'], { timeoutMs: 1000 })),
  );
  // A node this one flags `fail`/`fail?` (e.g. one that was killed and not restarted) is not healthy.
  if (view.some((e) => e.failing)) return undefined;
  if (replication.role === 'master') {
    // The master's own side of replication, which is what WAIT counts: every replica the view gives
    // it is online (its full sync done and acknowledged), not only linked on the replica's side.
    const myId = view.find((e) => e.flags.includes('myself'))?.id;
    const replicas = view.filter((e) => e.masterId !== undefined && e.masterId === myId).length;
    const online = Object.entries(replication).filter(
      ([field, value]) => /^slave\d+$/.test(field) && /(?:^|,)state=online(?:,|$)/.test(value),
    ).length;
    if (online !== replicas) return undefined;
  }
  const byId = new Map(view.map((e) => [e.id, e.port]));
  const roles = view.map((e) =>
    e.isMaster ? `${e.port}=M${JSON.stringify(e.slots)}` : `${e.port}=S${byId.get(e.masterId ?? '')}`,
  );
  return roles.sort().join(' ');
}

/**
 * Waits until every running, unpaused node reports `cluster_state:ok`, all 16384 slots
 * assigned, all `nodes.length` nodes known and none flagged failing (so a stopped node is not
 * healthy), `master_link_status:up` (replicas), every replica online on its master's side (what
 * WAIT counts), and all of them agree on who is master of which slots and who replicates whom.
 * With `masters`, the agreed view must also have exactly that many slot-serving masters and no
 * slot-less master.
 */
export async function waitForClusterHealthy(
  nodes: RedisServerProcess[],
  timeoutMs = 20_000,
  expected: { masters?: number } = {},
): Promise<void> {
  await waitUntil(
    async () => {
      const live = nodes.filter((n) => n.running && !n.paused);
      const views = await Promise.all(live.map((n) => nodeHealth(n, nodes.length)));
      if (views.some((v) => v === undefined) || new Set(views).size !== 1) return false;
      if (expected.masters === undefined) return true;
      const roles = (views[0] as string).split(' ');
      const servingMasters = roles.filter((r) => /=M\[\[/.test(r)).length;
      const emptyMasters = roles.filter((r) => r.endsWith('=M[]')).length;
      return servingMasters === expected.masters && emptyMasters === 0;
    },
    { timeoutMs, intervalMs: 50, description: 'every cluster node to be ok and agree on the topology' },
  );
}

/**
 * Starts masters × (1 + replicasPerMaster) nodes with `--cluster-enabled yes`, joins them
 * with `redis-cli --cluster create ... --cluster-yes`, and waits until the cluster is healthy.
 * On any failure every started node is stopped before the error is rethrown.
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<RedisClusterTopology> {
  if ((options.masters ?? 3) < 3) throw new RangeError('redis-cli --cluster create needs at least 3 masters');
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchCluster(options);
    } catch (error) {
      // Another process may grab a probed port before redis binds it: retry with fresh ports.
      if (attempt >= 3 || !/Address already in use/i.test(String(error))) throw error;
    }
  }
}

async function launchCluster(options: StartClusterOptions): Promise<RedisClusterTopology> {
  const { masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 2000, startTimeoutMs = 30_000 } = options;
  const count = masters * (1 + replicasPerMaster);
  const ports = await getFreeClusterPorts(count);
  const nodes = await startAll(
    ports.map(
      (port) => () =>
        startRedis({
          port,
          args: [
            ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
            ...['--cluster-node-timeout', String(nodeTimeoutMs)],
            ...(options.args ?? []),
          ],
        }),
    ),
  );
  const topology = clusterTopology(nodes, nodeTimeoutMs);
  try {
    const addresses = ports.map((port) => `${LOCALHOST}:${port}`);
    const replicas = ['--cluster-replicas', String(replicasPerMaster)];
    await redisCli(['--cluster', 'create', ...addresses, ...replicas, '--cluster-yes'], startTimeoutMs);
    await waitForClusterHealthy(nodes, startTimeoutMs, { masters });
    return topology;
  } catch (error) {
    await stopAll(nodes);
    throw error;
  }
}

function clusterTopology(nodes: RedisServerProcess[], nodeTimeoutMs: number): RedisClusterTopology {
  const nodeByPort = (port: number): RedisServerProcess | undefined => nodes.find((n) => n.port === port);
  const clusterNodes = async (): Promise<ClusterNodeEntry[]> => {
    let lastError: unknown = new Error('no running, unpaused cluster node');
    for (const node of nodes.filter((n) => n.running && !n.paused)) {
      try {
        return parseClusterNodes(
          String(await redisCommand(node.port, ['CLUSTER', 'NODES'], { timeoutMs: 1000 })),
        );
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  };
  const toServers = (entries: ClusterNodeEntry[]): RedisServerProcess[] =>
    entries.map((e) => nodeByPort(e.port)).filter((n): n is RedisServerProcess => n !== undefined);
  const masterForSlot = async (slot: number): Promise<RedisServerProcess> => {
    const owner = ownerOfSlot(await clusterNodes(), slot);
    const node = owner && nodeByPort(owner.port);
    if (!node) throw new Error(`no master serves slot ${slot}`);
    return node;
  };
  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: n.host, port: n.port })),
    nodeTimeoutMs,
    clusterNodes,
    masters: async () => toServers((await clusterNodes()).filter((e) => e.isMaster && e.slots.length > 0)),
    replicas: async () => toServers((await clusterNodes()).filter((e) => !e.isMaster)),
    masterForSlot,
    masterForKey: (key) => masterForSlot(keySlot(key)),
    nodeByPort,
    waitUntilHealthy: (timeoutMs) => waitForClusterHealthy(nodes, timeoutMs),
    stop: () => stopAll(nodes),
  };
}
