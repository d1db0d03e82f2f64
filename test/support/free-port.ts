import * as net from 'net';
import { processSingleton } from './host-process';

/** Loopback address every harness process binds to. */
export const LOCALHOST = '127.0.0.1';

/** Offset Redis Cluster adds to a node's port for its cluster bus. */
export const CLUSTER_BUS_OFFSET = 10000;

/*
 * Cluster nodes need `port` and `port + 10000` free. Both are kept below Linux's default
 * ephemeral range (32768+), so outgoing connections never grab them between probe and bind.
 */
const CLUSTER_PORT_MIN = 12000;
const CLUSTER_PORT_MAX = 22000;

function listen(port: number): Promise<net.Server | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen({ port, host: LOCALHOST, exclusive: true }, () => resolve(server));
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** True when `port` can be bound on 127.0.0.1 right now. */
export async function isPortFree(port: number): Promise<boolean> {
  const server = await listen(port);
  if (!server) return false;
  await close(server);
  return true;
}

/*
 * Plain ports come from below the ephemeral range too: a port the OS picks for `listen(0)` can be
 * taken by any outgoing connection between the probe and the real bind (a microservice's listen()
 * failed with EADDRINUSE that way under the parallel run). Each Jest worker gets its own block of
 * 1000 ports, so workers never race each other for one; inside a block a cursor moves on, so a port
 * just handed out is not offered again soon. The cursor belongs to the worker process, not to a spec
 * file's module registry: a later file never gets the port of an earlier file's stopped server, which
 * a client the earlier file left reconnecting would reach (an EVAL_RO from nowhere in a command count).
 */
const PLAIN_PORT_MIN = 2000;
const PLAIN_BLOCK_SIZE = 1000;
const PLAIN_BLOCKS = 10; // 2000–11999, below the cluster ports
const plainCursor = processSingleton('plain-port-cursor', () => ({
  next: Math.floor(Math.random() * PLAIN_BLOCK_SIZE),
}));

function plainBlockStart(): number {
  // scripts/test.cjs shifts the blocks of Jest runs it starts side by side (TEST_PORT_BLOCK_OFFSET):
  // each run numbers its workers from 1.
  const offset = Number(process.env.TEST_PORT_BLOCK_OFFSET ?? 0);
  const worker = (Number(process.env.JEST_WORKER_ID ?? 0) + offset) % PLAIN_BLOCKS;
  return PLAIN_PORT_MIN + worker * PLAIN_BLOCK_SIZE;
}

/** One free TCP port on 127.0.0.1, from this worker's block below the ephemeral range. */
export async function getFreePort(): Promise<number> {
  const [port] = await getFreePorts(1);
  return port;
}

/** `count` distinct free ports, all held open together while probing so none repeats. */
export async function getFreePorts(count: number): Promise<number[]> {
  const start = plainBlockStart();
  const servers: net.Server[] = [];
  try {
    for (let tried = 0; tried < PLAIN_BLOCK_SIZE && servers.length < count; tried++) {
      const port = start + (plainCursor.next++ % PLAIN_BLOCK_SIZE);
      const server = await listen(port);
      if (server) servers.push(server);
    }
    if (servers.length < count) {
      throw new Error(
        `only ${servers.length} of ${count} ports are free in ${start}–${start + PLAIN_BLOCK_SIZE - 1}`,
      );
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map(close));
  }
}

/**
 * `count` distinct ports P such that both P and P + 10000 (the cluster bus) are free,
 * with P + 10000 < 65536. Ports are probed from a random start so parallel Jest workers
 * rarely collide.
 */
export async function getFreeClusterPorts(count: number): Promise<number[]> {
  const span = CLUSTER_PORT_MAX - CLUSTER_PORT_MIN;
  const start = CLUSTER_PORT_MIN + Math.floor(Math.random() * span);
  const held: net.Server[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < span && ports.length < count; i++) {
      const port = CLUSTER_PORT_MIN + ((start - CLUSTER_PORT_MIN + i) % span);
      const main = await listen(port);
      if (!main) continue;
      const bus = await listen(port + CLUSTER_BUS_OFFSET);
      held.push(main);
      if (!bus) continue;
      held.push(bus);
      ports.push(port);
    }
    if (ports.length < count) {
      throw new Error(`only ${ports.length} of ${count} cluster port pairs are free`);
    }
    return ports;
  } finally {
    await Promise.all(held.map(close));
  }
}
