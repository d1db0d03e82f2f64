import { KindRegistry } from '../kind-registry';
import { ReentrantMutex } from '../kinds/reentrant-mutex';
import { TokenLock } from '../kinds/token-lock';
import type { LockBackend } from '../lock-engine';
import type { ResolvedEngineOptions } from '../lock-options';
import {
  closeConnection,
  duplicateForSubscriber,
  resolveConnection,
  ResolvedConnection,
} from '../redis-connection';
import { RedisGateway } from '../redis-gateway';
import { WakeupHub } from '../wakeup-hub';
import { RedlockKind } from './redlock-kind';
import type { ResolvedRedlockOptions } from './redlock-options';

/**
 * Locks by RedLock over independent masters. Each node gets its own gateway whose command timeout
 * is the (short) node timeout, and runs the ordinary single-node scripts; `RedlockKind` turns the
 * nodes' answers into one. Waiters subscribe on every node, and a release publishes on every node
 * that held the lock, so a wake-up survives a minority of nodes being down.
 *
 * Offers the reentrant mutex and the token lock. Read-write, fair and semaphore kinds are refused:
 * their single-node scripts do not compose by majority (a semaphore of `limit` could admit more
 * than `limit` holders across different majorities, and per-node FIFO queues can disagree).
 */
export class RedlockBackend implements LockBackend {
  readonly hub: WakeupHub;
  readonly kinds: KindRegistry;
  /** One gateway per node, in the order given. */
  readonly gateways: readonly RedisGateway[];
  private readonly connections: ResolvedConnection[];

  constructor(redlock: ResolvedRedlockOptions, options: ResolvedEngineOptions) {
    this.connections = [];
    try {
      redlock.nodes.forEach((node, i) => this.connections.push(resolveConnection(node, `redlock[${i}]`)));
    } catch (err) {
      for (const c of this.connections) if (c.owned) c.client.disconnect();
      throw err;
    }
    this.gateways = this.connections.map((c) => new RedisGateway(c.client, redlock.nodeTimeoutMs));
    const fence = options.fenceTtlMs;
    const jitter = redlock.retryJitterMs;
    const gateways = this.gateways;
    this.kinds = new KindRegistry(
      {
        mutex: new RedlockKind(
          gateways.map((g) => new ReentrantMutex(g, fence)),
          gateways,
          fence,
          jitter,
        ),
        token: new RedlockKind(
          gateways.map((g) => new TokenLock(g, fence)),
          gateways,
          fence,
          jitter,
        ),
      },
      'RedLock (the redlock option)',
    );
    this.hub = new WakeupHub(
      () => this.connections.map((c) => duplicateForSubscriber(c.client)),
      () => false,
      redlock.nodeTimeoutMs,
    );
  }

  /** Number of RedLock nodes. */
  get size(): number {
    return this.connections.length;
  }

  async close(): Promise<void> {
    await this.hub.close();
    await Promise.all(this.connections.filter((c) => c.owned).map((c) => closeConnection(c.client)));
  }
}
