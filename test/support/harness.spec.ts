import * as fs from 'fs';
import Redis from 'ioredis';
import { keySlot } from './cluster-slots';
import { failOnUnhandledInstalled, takeUnhandledErrors } from './fail-on-unhandled';
import { getFreeClusterPorts, getFreePorts, isPortFree } from './free-port';
import { trackedChildPids } from './process-reaper';
import {
  closeClient,
  clusterClient,
  keysWithoutTtl,
  listClients,
  pubsubChannels,
  redisClient,
} from './redis-assertions';
import { redisCommand, redisInfo } from './redis-command';
import { startRedis } from './redis-server';
import { startCluster, startRedisGroup, startSentinel } from './redis-topologies';
import { startAll } from './topology-utils';

describe('startRedis', () => {
  it('starts a server that answers PING, and stop() frees its port and directory', async () => {
    const server = await startRedis();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(trackedChildPids()).toContain(server.pid);
    const client = redisClient(server.url);
    try {
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'save')).toEqual(['save', '']);
    } finally {
      await closeClient(client);
    }
    const pid = server.pid;
    await server.stop();
    expect(server.running).toBe(false);
    expect(trackedChildPids()).not.toContain(pid);
    expect(fs.existsSync(server.dir)).toBe(false);
    expect(await isPortFree(server.port)).toBe(true);
  });

  it('restarts on the same port with an empty dataset', async () => {
    const server = await startRedis();
    try {
      await redisCommand(server.port, ['SET', 'k', 'v']);
      const oldPid = server.pid;
      await server.restart();
      expect(server.pid).not.toBe(oldPid);
      expect(await redisCommand(server.port, ['GET', 'k'])).toBeNull();
    } finally {
      await server.stop();
    }
  });

  it('pause() freezes the server and resume() thaws it', async () => {
    const server = await startRedis();
    // No command deadline on the client: its pings before and after the pause may be slow on a loaded
    // machine (a 200 ms one failed a fresh-clone run, 42); only the frozen server must not answer.
    const client = redisClient(server.url);
    try {
      await client.ping();
      server.pause();
      let answered = false;
      const queued = client.ping().then((reply) => {
        answered = true;
        return reply;
      });
      await expect(redisCommand(server.port, ['PING'], { timeoutMs: 200 })).rejects.toThrow(/timed out/);
      expect(answered).toBe(false);
      server.resume();
      expect(await queued).toBe('PONG'); // thawed: the command sent while frozen is answered
      expect(await client.ping()).toBe('PONG');
    } finally {
      await closeClient(client);
      await server.stop();
    }
  });

  it('reports the server output when start-up fails', async () => {
    await expect(startRedis({ args: ['--no-such-directive', 'x'] })).rejects.toThrow(/no-such-directive/);
  });
});

describe('ports and groups', () => {
  it('hands out distinct free ports, and cluster ports with a free bus port', async () => {
    const ports = await getFreePorts(5);
    expect(new Set(ports).size).toBe(5);
    for (const port of await getFreeClusterPorts(3)) {
      expect(port + 10000).toBeLessThan(65536);
      expect(await isPortFree(port + 10000)).toBe(true);
    }
  });

  it('startRedisGroup(3) starts 3 independent servers on distinct ports', async () => {
    const group = await startRedisGroup(3);
    try {
      expect(new Set(group.servers.map((s) => s.port)).size).toBe(3);
      for (const server of group.servers) expect(await redisCommand(server.port, ['PING'])).toBe('PONG');
    } finally {
      await group.stop();
    }
  });

  it('stops the servers that started when another one fails', async () => {
    const before = trackedChildPids();
    await expect(
      startAll([() => startRedis(), () => startRedis({ args: ['--bogus', 'x'] })]),
    ).rejects.toThrow(/bogus/);
    expect(trackedChildPids()).toEqual(before);
  });
});

describe('redis assertions', () => {
  it('lists channels, keys without TTL and clients', async () => {
    const server = await startRedis();
    const client = redisClient(server.url);
    const subscriber = redisClient(server.url, { connectionName: 'harness-sub' });
    try {
      await subscriber.subscribe('plain-channel');
      await subscriber.ssubscribe('shard-channel');
      await client.set('forever', '1');
      await client.set('leased', '1', 'PX', 60_000);
      expect(await pubsubChannels(client)).toEqual(['plain-channel', 'shard-channel']);
      expect(await keysWithoutTtl(client)).toEqual(['forever']);
      const clients = await listClients(client);
      expect(clients.map((c) => c.name)).toEqual(['harness-sub']);
      expect(clients[0]).toMatchObject({ sub: '1', ssub: '1', server: `127.0.0.1:${server.port}` });
    } finally {
      await closeClient(subscriber);
      await closeClient(client);
      await server.stop();
    }
  });
});

describe('startCluster', () => {
  it('starts 3 masters + 3 replicas that serve keys through ioredis Cluster', async () => {
    const cluster = await startCluster({ masters: 3, replicasPerMaster: 1 });
    const client = clusterClient(cluster.startupNodes);
    try {
      for (const node of cluster.nodes) {
        expect(await redisInfo(node.port, 'cluster-info')).toMatchObject({
          cluster_state: 'ok',
          cluster_slots_assigned: '16384',
        });
      }
      expect(await cluster.masters()).toHaveLength(3);
      expect(await cluster.replicas()).toHaveLength(3);
      for (const key of ['harness-key', '{user:1}:lock', 'ключ 🔒']) {
        expect(keySlot(key)).toBe(await redisCommand(cluster.nodes[0].port, ['CLUSTER', 'KEYSLOT', key]));
        await client.set(key, 'value');
        expect(await client.get(key)).toBe('value');
        const owner = await cluster.masterForKey(key);
        expect(await redisCommand(owner.port, ['GET', key])).toBe('value');
      }
      expect(await keysWithoutTtl(client)).toHaveLength(3);
    } finally {
      await closeClient(client);
      await cluster.stop();
    }
  });
});

describe('startSentinel', () => {
  it('lets ioredis find the master through the sentinels', async () => {
    const topology = await startSentinel({ replicas: 2, sentinels: 3, masterName: 'mymaster' });
    const client = new Redis({
      sentinels: topology.sentinelAddresses,
      name: topology.masterName,
      maxRetriesPerRequest: 1,
    });
    try {
      expect(await topology.currentMaster()).toEqual({ host: '127.0.0.1', port: topology.master.port });
      expect(await client.config('GET', 'port')).toEqual(['port', String(topology.master.port)]);
      await client.set('through-sentinel', '1');
      expect(await redisCommand(topology.master.port, ['GET', 'through-sentinel'])).toBe('1');
    } finally {
      await closeClient(client);
      await topology.stop();
    }
  });

  it('stops what it started when a later step fails', async () => {
    const before = trackedChildPids();
    await expect(startSentinel({ replicas: 1, sentinels: 1, quorum: 0 })).rejects.toThrow(/[Qq]uorum/);
    expect(trackedChildPids()).toEqual(before);
  });
});

describe('fail-on-unhandled', () => {
  it('is installed and records unhandled rejections', async () => {
    expect(failOnUnhandledInstalled()).toBe(true);
    const rejected = Promise.reject(new Error('provoked'));
    await new Promise((resolve) => setImmediate(resolve));
    const errors = takeUnhandledErrors();
    rejected.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'unhandledRejection', error: new Error('provoked') });
  });
});
