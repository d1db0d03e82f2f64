import { KindRegistry } from '../../kinds/kind-registry';
import { ReentrantMutex } from '../../kinds/reentrant-mutex';
import { TokenLock } from '../../kinds/token-lock';
import type { LockBackend } from '../../engine/lock-backend';
import { LockRedisError } from '../../errors';
import { answers, askNodes, firstError } from '../../redis/node-fanout';
import { watchConnection } from '../../redis/connection-watch';
import type { ConnectionState } from '../../events/lock-event-map';
import type { ResolvedEngineOptions } from '../../options/lock-options';
import type { RedisDoor } from '../../redis/redis-door';
import { RedisGateway } from '../../redis/redis-gateway';
import { WakeupHub } from '../../waiting/wakeup-hub';
import { RedlockKind } from './redlock-kind';
import { quorumOf, type ResolvedRedlockOptions } from './redlock-options';
import type { InspectionTarget } from '../../inspection/inspection-target';
import type { LockEnvironment } from '../lock-environment';

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
  /** Inspection reads every node; a holder counts on a majority. */
  readonly inspection: InspectionTarget;
  private readonly doors: RedisDoor[];

  constructor(redlock: ResolvedRedlockOptions, options: ResolvedEngineOptions, env: LockEnvironment) {
    const { runtime } = env;
    this.doors = [];
    try {
      redlock.nodes.forEach((node, i) => this.doors.push(env.openDoor(node, `redlock[${i}]`)));
    } catch (err) {
      // Owned connections are lazy: nothing is open yet, close() only drops them.
      for (const door of this.doors) door.close().catch(() => undefined);
      throw err;
    }
    this.gateways = this.doors.map((door) => new RedisGateway(door, redlock.nodeTimeoutMs, runtime));
    const fence = options.fenceTtlMs;
    const jitter = redlock.retryJitterMs;
    const gateways = this.gateways;
    this.kinds = new KindRegistry(
      {
        mutex: new RedlockKind(
          gateways.map((g) => new ReentrantMutex(g, fence)),
          gateways,
          { fenceTtlMs: fence, retryJitterMs: jitter, runtime },
        ),
        token: new RedlockKind(
          gateways.map((g) => new TokenLock(g, fence)),
          gateways,
          { fenceTtlMs: fence, retryJitterMs: jitter, runtime },
        ),
      },
      'RedLock (the redlock option)',
    );
    this.hub = new WakeupHub(
      runtime,
      () => this.doors.map((door) => door.subscriber()),
      () => false,
      redlock.nodeTimeoutMs,
    );
    this.inspection = {
      gateways: this.gateways,
      quorum: quorumOf(this.gateways.length),
      listen: (channel, listener, onRefused) => this.hub.listen(channel, listener, onRefused),
      unlisten: (channel) => this.hub.unlisten(channel),
    };
  }

  watchConnections(listener: (state: ConnectionState) => void): void {
    this.doors.forEach((door, i) => watchConnection(door, `RedLock node ${i}`, listener));
  }

  watchReconnects(listener: () => void): void {
    for (const door of this.doors) door.watch((state) => state === 'up' && listener());
  }

  /** Resolves when a majority answered PING: the slowest round trip of that majority. */
  async ping(timeoutMs: number): Promise<number> {
    const ballot = await askNodes(this.gateways, (gateway, i) =>
      gateway.ping(timeoutMs, `RedLock node ${i}`),
    );
    const answered = answers(ballot).sort((a, b) => a - b);
    const quorum = quorumOf(this.doors.length);
    if (answered.length >= quorum) return answered[quorum - 1]!;
    throw new LockRedisError(
      `Only ${answered.length} of ${this.doors.length} RedLock nodes answered PING; ${quorum} are needed`,
      undefined,
      firstError(ballot),
    );
  }

  async close(): Promise<void> {
    await this.hub.close();
    await Promise.all(this.doors.map((door) => door.close())); // each closes only what the library opened
  }
}
