import { chooseClusterPublish } from './cluster-pubsub';
import { KindRegistry } from '../kinds/kind-registry';
import { FairLock } from '../kinds/fair-lock';
import { ReadWriteLock } from '../kinds/read-write-lock';
import { ReentrantMutex } from '../kinds/reentrant-mutex';
import { Semaphore } from '../kinds/semaphore';
import { TokenLock } from '../kinds/token-lock';
import { waiterTtlMs } from '../kinds/waiter-ttl';
import type { LockBackend } from '../engine/lock-backend';
import { watchConnection } from '../redis/connection-watch';
import type { ConnectionState } from '../events/lock-event-map';
import type { ResolvedEngineOptions } from '../options/lock-options';
import type { RedisDoor } from '../redis/redis-door';
import { RedisGateway } from '../redis/redis-gateway';
import { checkPermissions } from '../redis/permission-check';
import { withReplicaAcks } from './replica-acks';
import { RedisMultiLocker } from '../multi/redis-multi-locker';
import type { MultiKeyLocker } from '../multi/multi-key-locker';
import { WakeupHub } from '../waiting/wakeup-hub';
import type { InspectionTarget } from '../inspection/inspection-target';
import type { Runtime } from '../runtime/runtime';

/** Locks on one Redis deployment: a standalone server, a Sentinel-managed master, or a Cluster. */
export class RedisBackend implements LockBackend {
  readonly gateway: RedisGateway;
  readonly hub: WakeupHub;
  readonly kinds: KindRegistry;
  readonly multiKeys?: MultiKeyLocker;
  readonly inspection: InspectionTarget;

  constructor(
    private readonly door: RedisDoor,
    options: ResolvedEngineOptions,
    runtime: Runtime,
  ) {
    this.gateway = new RedisGateway(door, options.commandTimeoutMs, runtime);
    // The publish command first: the ACL check asks for the one the scripts will use.
    if (door.cluster) chooseClusterPublish(this.gateway, Math.ceil(options.commandTimeoutMs / 2));
    // The user's ACL is checked before the first script, so a missing command is a clear error
    // instead of a script that fails half-way (a key written without its TTL).
    this.gateway.beforeScripts(() => checkPermissions(this.gateway, options.keyPrefix), true);
    this.hub = new WakeupHub(
      runtime,
      () => door.subscriber(),
      () => this.gateway.publishCommand === 'SPUBLISH',
      options.commandTimeoutMs,
    );
    const fence = options.fenceTtlMs;
    // With `replicas`, multi-key locks go key by key through the kinds, which WAIT after each grant.
    if (!options.replicas) this.multiKeys = new RedisMultiLocker(this.gateway, fence);
    this.kinds = new KindRegistry(
      withReplicaAcks(
        {
          mutex: new ReentrantMutex(this.gateway, fence),
          token: new TokenLock(this.gateway, fence),
          readWrite: new ReadWriteLock(this.gateway, fence, waiterTtlMs(options.backoff.maxMs)),
          fair: new FairLock(
            this.gateway,
            fence,
            waiterTtlMs(options.backoff.maxMs),
            options.cohort !== false && options.cohort.fair === true,
          ),
          semaphore: new Semaphore(this.gateway, fence, waiterTtlMs(options.backoff.maxMs)),
        },
        this.gateway,
        options.replicas,
      ),
      door.cluster ? 'a Redis Cluster' : 'this Redis connection',
    );
    this.inspection = {
      gateways: [this.gateway],
      quorum: 1,
      listen: (channel, listener, onRefused) => this.hub.listen(channel, listener, onRefused),
      unlisten: (channel) => this.hub.unlisten(channel),
    };
  }

  watchConnections(listener: (state: ConnectionState) => void): void {
    watchConnection(this.door, this.door.cluster ? 'Redis Cluster' : 'Redis', listener);
  }

  watchReconnects(listener: () => void): void {
    this.door.watch((state) => state === 'up' && listener());
  }

  ping(timeoutMs: number): Promise<number> {
    return this.gateway.ping(timeoutMs);
  }

  async close(): Promise<void> {
    await this.hub.close();
    await this.door.close(); // closes only a connection the library opened
  }
}
