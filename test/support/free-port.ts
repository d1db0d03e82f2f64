import * as net from 'net';

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

/** One free TCP port on 127.0.0.1 chosen by the OS (listen on 0, read, close). */
export async function getFreePort(): Promise<number> {
  const [port] = await getFreePorts(1);
  return port;
}

/** `count` distinct free ports, all held open together while probing so none repeats. */
export async function getFreePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    while (servers.length < count) {
      const server = await listen(0);
      if (!server) throw new Error('could not bind an ephemeral port on 127.0.0.1');
      servers.push(server);
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
