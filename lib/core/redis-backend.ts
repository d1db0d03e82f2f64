import { KindRegistry } from './kind-registry';
import { ReentrantMutex } from './kinds/reentrant-mutex';
import { TokenLock } from './kinds/token-lock';
import type { LockBackend } from './lock-engine';
import type { ResolvedEngineOptions } from './lock-options';
import { duplicateForSubscriber, ResolvedConnection } from './redis-connection';
import { RedisGateway } from './redis-gateway';
import { isCluster } from './redis-client';
import { WakeupHub } from './wakeup-hub';

/** Locks on one Redis deployment: a standalone server, a Sentinel-managed master, or a Cluster. */
export class RedisBackend implements LockBackend {
  readonly gateway: RedisGateway;
  readonly hub: WakeupHub;
  readonly kinds: KindRegistry;

  constructor(
    private readonly connection: ResolvedConnection,
    options: ResolvedEngineOptions,
  ) {
    this.gateway = new RedisGateway(connection.client, options.commandTimeoutMs);
    this.hub = new WakeupHub(
      () => duplicateForSubscriber(connection.client),
      () => this.gateway.publishCommand === 'SPUBLISH',
    );
    const fence = options.fenceTtlMs;
    this.kinds = new KindRegistry(
      {
        mutex: new ReentrantMutex(this.gateway, fence),
        token: new TokenLock(this.gateway, fence),
      },
      isCluster(connection.client) ? 'a Redis Cluster' : 'this Redis connection',
    );
  }

  async close(): Promise<void> {
    await this.hub.close();
    if (this.connection.owned) {
      const client = this.connection.client;
      await client.quit().catch(() => client.disconnect());
    }
  }
}
