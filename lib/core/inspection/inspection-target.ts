import type { RedisGateway } from '../redis/redis-gateway';

/**
 * What inspection needs from a backend: the Redis nodes to read and write (one deployment, or every
 * RedLock master) and a way to hear force-release notices on the engine's subscriber connection.
 * Backends without it (the in-memory testing backend) do not support inspection.
 */
export interface InspectionTarget {
  /** One gateway, or one per RedLock node. */
  readonly gateways: readonly RedisGateway[];
  /** Nodes that must agree that an owner holds a lock: 1, or a RedLock majority. */
  readonly quorum: number;
  /**
   * Listens on `channel` (SUBSCRIBE on the wake-up subscriber connection) until unlisten() or the
   * backend closes; rejects when Redis refuses it, `onRefused` hears a refused resubscription.
   */
  listen(
    channel: string,
    listener: (message: string) => void,
    onRefused?: (error: unknown) => void,
  ): Promise<void>;
  /** Stops listening on `channel`. */
  unlisten(channel: string): void;
}
