import { LOCALHOST } from './free-port';
import { redisCommand, redisInfo, type RespReply } from './redis-command';
import { startRedis, type RedisServerProcess } from './redis-server';
import { startAll, stopAll, type HostPort } from './topology-utils';
import { waitUntil } from './wait';

/** Options for {@link startSentinel}. */
export interface StartSentinelOptions {
  /** Default 2. */
  replicas?: number;
  /** Default 3. */
  sentinels?: number;
  /** Default 'mymaster'. */
  masterName?: string;
  /** Default: a majority of the sentinels (2 of 3). */
  quorum?: number;
  /** `sentinel down-after-milliseconds`; default 1000. */
  downAfterMs?: number;
  /** `sentinel failover-timeout`; default 3000. */
  failoverTimeoutMs?: number;
  /** Extra redis-server arguments for the master and replicas. */
  args?: string[];
  /** Budget for the whole start-up; default 20 s. */
  startTimeoutMs?: number;
}

/** A running master + replicas + sentinels group on 127.0.0.1. */
export interface RedisSentinelTopology {
  /** The initial master (after a failover ask currentMaster()). */
  master: RedisServerProcess;
  replicas: RedisServerProcess[];
  sentinels: RedisServerProcess[];
  /** For `new Redis({ sentinels: sentinelAddresses, name: masterName })`. */
  sentinelAddresses: HostPort[];
  masterName: string;
  /** Master address according to the first sentinel that answers. */
  currentMaster(): Promise<HostPort>;
  /** The data node (master or replica) listening on `port`. */
  serverByPort(port: number): RedisServerProcess | undefined;
  /** Waits until every live sentinel reports a master other than `oldMasterPort`; returns it. */
  waitForFailover(oldMasterPort: number, timeoutMs?: number): Promise<RedisServerProcess>;
  /**
   * Waits until the master the sentinels name has `count` replicas linked to it (`master_link_status:up`
   * on each, `connected_slaves` on the master). The master is asked again on every poll: under load
   * a second failover can follow the first (a new master's first PING answered after
   * down-after-milliseconds), and a master read once would wait for its own replica link forever.
   * On a timeout the error carries each data node's replication state.
   */
  waitForReplicas(count: number, timeoutMs?: number): Promise<void>;
  /** Stops sentinels, replicas and master. */
  stop(): Promise<void>;
}

/**
 * Waits until INFO replication on `replica` shows `master_link_status:up`. On a timeout the error
 * carries the replica's last replication state (whose replica it is, since when the link is down, a
 * sync in progress), so a run that fails here says why.
 */
export async function waitForReplicaLink(replica: RedisServerProcess, timeoutMs = 10_000): Promise<void> {
  let last: Record<string, string> = {};
  try {
    await waitUntil(
      async () => {
        last = await redisInfo(replica.port, 'replication', { timeoutMs: 1000 });
        return last.master_link_status === 'up';
      },
      { timeoutMs, intervalMs: 20, description: `replica ${replica.port} to report master_link_status:up` },
    );
  } catch (error) {
    const state = replicationSummary(last);
    throw new Error(`${(error as Error).message}; its INFO replication: ${state || 'never answered'}`);
  }
}

/** The fields of INFO replication that say whose replica a node is and how its link stands. */
function replicationSummary(info: Record<string, string>): string {
  return Object.entries(info)
    .filter(([field]) =>
      /^(role|connected_slaves|master_host|master_port|master_link|master_sync|master_last_io|error|down)/.test(
        field,
      ),
    )
    .map(([field, value]) => `${field}:${value}`)
    .join(' ');
}

async function sentinelQuery(sentinel: RedisServerProcess, args: string[]): Promise<RespReply> {
  return redisCommand(sentinel.port, ['SENTINEL', ...args], { timeoutMs: 1000 });
}

async function masterAddress(sentinel: RedisServerProcess, name: string): Promise<HostPort | undefined> {
  const reply = await sentinelQuery(sentinel, ['get-master-addr-by-name', name]);
  return Array.isArray(reply) ? { host: String(reply[0]), port: Number(reply[1]) } : undefined;
}

/**
 * Starts 1 master, `replicas` replicas (`--replicaof`) and `sentinels` sentinels monitoring it,
 * then waits until replicas are linked and every sentinel knows the master, every replica and
 * every other sentinel (so failover can start at once). Cleans up everything on failure.
 */
export async function startSentinel(options: StartSentinelOptions = {}): Promise<RedisSentinelTopology> {
  const { replicas: replicaCount = 2, sentinels: sentinelCount = 3, masterName = 'mymaster' } = options;
  const { downAfterMs = 1000, failoverTimeoutMs = 3000, startTimeoutMs = 20_000 } = options;
  const quorum = options.quorum ?? Math.floor(sentinelCount / 2) + 1;
  const started: RedisServerProcess[] = [];
  try {
    const master = await startRedis({ args: options.args });
    started.push(master);
    const replicaArgs = ['--replicaof', LOCALHOST, String(master.port), ...(options.args ?? [])];
    const replicas = await startAll(
      Array.from({ length: replicaCount }, () => () => startRedis({ args: replicaArgs })),
    );
    started.push(...replicas);
    await Promise.all(replicas.map((r) => waitForReplicaLink(r, startTimeoutMs)));
    const config = [
      `sentinel monitor ${masterName} ${LOCALHOST} ${master.port} ${quorum}`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      `sentinel failover-timeout ${masterName} ${failoverTimeoutMs}`,
      `sentinel parallel-syncs ${masterName} 1`,
    ];
    const sentinels = await startAll(
      Array.from({ length: sentinelCount }, () => () => startRedis({ sentinelConfig: config })),
    );
    started.push(...sentinels);
    await waitUntil(
      async () => {
        for (const s of sentinels) {
          if ((await masterAddress(s, masterName))?.port !== master.port) return false;
          const known = await sentinelQuery(s, ['replicas', masterName]);
          const peers = await sentinelQuery(s, ['sentinels', masterName]);
          if (
            (known as RespReply[]).length !== replicaCount ||
            (peers as RespReply[]).length !== sentinelCount - 1
          ) {
            return false;
          }
        }
        return true;
      },
      {
        timeoutMs: startTimeoutMs,
        intervalMs: 50,
        description: 'sentinels to discover master, replicas and peers',
      },
    );
    return sentinelTopology(master, replicas, sentinels, masterName);
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

function sentinelTopology(
  master: RedisServerProcess,
  replicas: RedisServerProcess[],
  sentinels: RedisServerProcess[],
  masterName: string,
): RedisSentinelTopology {
  const dataNodes = [master, ...replicas];
  const serverByPort = (port: number): RedisServerProcess | undefined =>
    dataNodes.find((n) => n.port === port);
  const liveSentinels = (): RedisServerProcess[] => sentinels.filter((s) => s.running && !s.paused);
  const currentMaster = async (): Promise<HostPort> => {
    for (const s of liveSentinels()) {
      const address = await masterAddress(s, masterName).catch(() => undefined);
      if (address) return address;
    }
    throw new Error(`no live sentinel knows master ${masterName}`);
  };
  const waitForFailover = (oldMasterPort: number, timeoutMs = 20_000): Promise<RedisServerProcess> =>
    waitUntil(
      async () => {
        const ports = await Promise.all(
          liveSentinels().map(async (s) => (await masterAddress(s, masterName))?.port),
        );
        const port = ports[0];
        if (port === undefined || port === oldMasterPort || ports.some((p) => p !== port)) return undefined;
        const info = await redisInfo(port, 'replication', { timeoutMs: 1000 });
        return info.role === 'master' ? serverByPort(port) : undefined;
      },
      { timeoutMs, intervalMs: 50, description: `sentinels to fail over away from port ${oldMasterPort}` },
    );
  const waitForReplicas = async (count: number, timeoutMs = 60_000): Promise<void> => {
    let states: string[] = [];
    const state = async (node: RedisServerProcess): Promise<Record<string, string>> =>
      node.running && !node.paused
        ? redisInfo(node.port, 'replication', { timeoutMs: 1000 }).catch((e: unknown) => ({
            error: String(e),
          }))
        : { down: 'yes' };
    try {
      await waitUntil(
        async () => {
          const { port } = await currentMaster();
          const infos = await Promise.all(dataNodes.map(async (n) => [n, await state(n)] as const));
          states = infos.map(([n, i]) => `${n.port}: ${replicationSummary(i)}`);
          const own = infos.find(([n]) => n.port === port)?.[1];
          const linked = infos.filter(
            ([n, i]) => n.port !== port && i.master_link_status === 'up' && Number(i.master_port) === port,
          );
          return own?.role === 'master' && Number(own.connected_slaves) >= count && linked.length >= count;
        },
        { timeoutMs, intervalMs: 50, description: `${count} replicas linked to the current master` },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; replication: ${states.join('; ') || 'never read'}`);
    }
  };
  return {
    master,
    replicas,
    sentinels,
    sentinelAddresses: sentinels.map((s) => ({ host: s.host, port: s.port })),
    masterName,
    currentMaster,
    serverByPort,
    waitForFailover,
    waitForReplicas,
    stop: async () => {
      await stopAll(sentinels);
      await stopAll([...replicas, master]);
    },
  };
}
