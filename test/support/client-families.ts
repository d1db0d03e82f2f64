/*
 * The client families the library accepts, each built with its real npm package, so the client specs
 * can run one scenario per family: ioredis, node-redis 6 (`redis`), node-redis 5 (`redis5`, an alias of
 * redis@5), iovalkey and Valkey GLIDE. Every client made here is closed by `closeClients()`; the engine
 * never closes a client it was given.
 */
import type { HostPort } from './redis-topologies';

/** One family under test. */
export type Family = 'ioredis' | 'node-redis6' | 'node-redis5' | 'iovalkey' | 'glide';

export const FAMILIES: readonly Family[] = ['ioredis', 'node-redis6', 'node-redis5', 'iovalkey', 'glide'];

/** Something to close when the test is done. */
type Closer = () => Promise<unknown>;

/** Opens clients of one family and remembers how to close them. */
export class ClientFactory {
  private closers = new Map<unknown, Closer>();

  constructor(readonly family: Family) {}

  /** A standalone client of `url`'s server, connected (GLIDE and node-redis as their users connect them). */
  async standalone(url: string, auth?: { username: string; password: string }): Promise<unknown> {
    if (auth) {
      const u = new URL(url);
      u.username = auth.username;
      u.password = auth.password;
      url = u.toString();
    }
    const { hostname, port } = new URL(url);
    const host = hostname;
    const p = Number(port);
    switch (this.family) {
      case 'ioredis': {
        const { Redis } = await import('ioredis');
        const c = new Redis(p, host, { maxRetriesPerRequest: 3, ...auth });
        this.closers.set(c, () => c.quit().catch(() => c.disconnect()));
        return c;
      }
      case 'iovalkey': {
        const { Redis } = await import('iovalkey');
        const c = new Redis(p, host, { maxRetriesPerRequest: 3, ...auth });
        this.closers.set(c, () => c.quit().catch(() => c.disconnect()));
        return c;
      }
      case 'node-redis6':
      case 'node-redis5': {
        const { createClient } = await this.nodeRedis();
        const c = createClient({ url });
        c.on('error', () => undefined);
        await c.connect();
        this.closers.set(c, () => c.close().catch(() => c.destroy()));
        return c;
      }
      case 'glide': {
        const { GlideClient } = await import('@valkey/valkey-glide');
        const c = await GlideClient.createClient({
          addresses: [{ host, port: p }],
          requestTimeout: 2000,
          ...(auth && { credentials: auth }),
        });
        this.closers.set(c, async () => c.close());
        return c;
      }
    }
  }

  /**
   * A standalone client made synchronously and NOT connected, as `forRoot({ redis: createClient({ url }) })`
   * passes it: ioredis and iovalkey connect by themselves, node-redis is connected by the library on
   * first use. GLIDE clients are created connected (async): use standalone() for them.
   */
  sync(url: string): unknown {
    const { hostname: host, port } = new URL(url);
    /* eslint-disable @typescript-eslint/no-require-imports -- synchronous construction is the point */
    if (this.family === 'ioredis' || this.family === 'iovalkey') {
      const { Redis } = (
        this.family === 'ioredis' ? require('ioredis') : require('iovalkey')
      ) as typeof import('ioredis');
      const c = new Redis(Number(port), host, { maxRetriesPerRequest: 3 });
      this.closers.set(c, () => c.quit().catch(() => c.disconnect()));
      return c;
    }
    if (this.family === 'glide')
      throw new Error('GLIDE clients are created asynchronously: use standalone()');
    const { createClient } = (
      this.family === 'node-redis5' ? require('redis5') : require('redis')
    ) as typeof import('redis');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const c = createClient({ url });
    c.on('error', () => undefined);
    this.closers.set(c, async () => {
      if (c.isOpen) await c.close().catch(() => c.destroy());
    });
    return c;
  }

  /**
   * A Cluster client made synchronously and not connected (see sync()): ioredis/iovalkey `new Cluster`,
   * node-redis `createCluster` (connected by the library on first use).
   */
  syncCluster(nodes: readonly HostPort[]): unknown {
    /* eslint-disable @typescript-eslint/no-require-imports -- synchronous construction is the point */
    if (this.family === 'ioredis' || this.family === 'iovalkey') {
      const { Cluster } = (
        this.family === 'ioredis' ? require('ioredis') : require('iovalkey')
      ) as typeof import('ioredis');
      const c = new Cluster(
        nodes.map((n) => ({ host: n.host, port: n.port })),
        { redisOptions: { maxRetriesPerRequest: 3 } },
      );
      c.on('error', () => undefined);
      this.closers.set(c, () => c.quit().catch(() => c.disconnect()));
      return c;
    }
    if (this.family === 'glide') throw new Error('GLIDE clients are created asynchronously: use cluster()');
    const { createCluster } = (
      this.family === 'node-redis5' ? require('redis5') : require('redis')
    ) as typeof import('redis');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const c = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    c.on('error', () => undefined);
    this.closers.set(c, async () => {
      if (c.isOpen) await c.close().catch(() => c.destroy());
    });
    return c;
  }

  /** A Cluster client of these nodes, connected. */
  async cluster(nodes: readonly HostPort[]): Promise<unknown> {
    switch (this.family) {
      case 'ioredis':
      case 'iovalkey': {
        const { Cluster } = this.family === 'ioredis' ? await import('ioredis') : await import('iovalkey');
        const c = new Cluster(
          nodes.map((n) => ({ host: n.host, port: n.port })),
          { redisOptions: { maxRetriesPerRequest: 3 } },
        );
        c.on('error', () => undefined);
        this.closers.set(c, () => c.quit().catch(() => c.disconnect()));
        if (c.status !== 'ready') await new Promise((resolve) => c.once('ready', resolve));
        return c;
      }
      case 'node-redis6':
      case 'node-redis5': {
        const { createCluster } = await this.nodeRedis();
        const c = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
        c.on('error', () => undefined);
        await c.connect();
        this.closers.set(c, () => c.close().catch(() => c.destroy()));
        return c;
      }
      case 'glide': {
        const { GlideClusterClient } = await import('@valkey/valkey-glide');
        const c = await GlideClusterClient.createClient({
          addresses: nodes.map((n) => ({ host: n.host, port: n.port })),
          requestTimeout: 2000,
        });
        this.closers.set(c, async () => c.close());
        return c;
      }
    }
  }

  /** node-redis through Sentinel (`createSentinel`), made synchronously and not connected (see sync()). */
  syncSentinel(name: string, sentinels: readonly HostPort[]): unknown {
    /* eslint-disable @typescript-eslint/no-require-imports -- synchronous construction is the point */
    const { createSentinel } = (
      this.family === 'node-redis5' ? require('redis5') : require('redis')
    ) as typeof import('redis');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const c = createSentinel({
      name,
      sentinelRootNodes: sentinels.map((s) => ({ host: s.host, port: s.port })),
    });
    c.on('error', () => undefined);
    this.closers.set(c, async () => {
      if (c.isOpen) await c.close().catch(() => c.destroy());
    });
    return c;
  }

  /** node-redis through Sentinel (`createSentinel`), connected. */
  async sentinel(name: string, sentinels: readonly HostPort[]): Promise<unknown> {
    const { createSentinel } = await this.nodeRedis();
    const c = createSentinel({
      name,
      sentinelRootNodes: sentinels.map((s) => ({ host: s.host, port: s.port })),
    });
    c.on('error', () => undefined);
    await c.connect();
    this.closers.set(c, () => c.close().catch(() => c.destroy()));
    return c;
  }

  /** Closes one client made here. */
  async close(client: unknown): Promise<void> {
    const close = this.closers.get(client);
    this.closers.delete(client);
    await close?.().catch(() => undefined);
  }

  /**
   * Whether `client` is connected and ready for commands: ioredis and iovalkey `status === 'ready'`,
   * node-redis `isReady` (a Cluster or Sentinel client too). GLIDE clients have no such flag: false.
   */
  isReady(client: unknown): boolean {
    const c = client as { status?: string; isReady?: boolean };
    if (this.family === 'ioredis' || this.family === 'iovalkey') return c.status === 'ready';
    if (this.family === 'node-redis6' || this.family === 'node-redis5') return c.isReady === true;
    return false;
  }

  /** Closes every client made since the last call. */
  async closeClients(): Promise<void> {
    const closers = [...this.closers.values()];
    this.closers.clear();
    await Promise.all(closers.map((close) => close().catch(() => undefined)));
  }

  private async nodeRedis(): Promise<typeof import('redis')> {
    // Both majors expose the same entry points; v5 is installed as the `redis5` alias.
    return (
      this.family === 'node-redis5' ? await import('redis5') : await import('redis')
    ) as typeof import('redis');
  }
}
