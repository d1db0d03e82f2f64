import { LockRedisError, LockReplicationError } from '../errors';
import type { LockKinds } from '../kinds/kind-registry';
import type { LockKindTag } from '../kinds/key-space';
import type {
  AttemptRequest,
  AttemptResult,
  HoldRef,
  LockKind,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from '../kinds/lock-kind';
import type { LockOptions, ResolvedEngineOptions } from '../options/lock-options';
import { quoteKey } from '../errors/message-text';
import { type RedisGateway, toLockRedisError } from '../redis/redis-gateway';

type ReplicaAcks = NonNullable<ResolvedEngineOptions['replicas']>;

/**
 * Wraps every kind of a backend so that each fresh grant is followed by `WAIT count timeoutMs` on
 * the connection that wrote it. Redis replicates asynchronously: a grant the replicas have not
 * received is lost if the master fails over now. WAIT narrows that window (it does not close it:
 * a replica that acknowledged may still not be the one promoted, and WAIT does not make the write
 * durable), and tells the caller how many replicas have the grant.
 */
export function withReplicaAcks(
  kinds: LockKinds,
  gateway: RedisGateway,
  acks: ReplicaAcks | undefined,
): LockKinds {
  if (!acks) return kinds;
  // Every entry, whatever kinds the backend offers.
  const wrapped = Object.entries(kinds).map(([name, kind]) => [
    name,
    kind && new ReplicaAckedKind(kind, gateway, acks),
  ]);
  return Object.fromEntries(wrapped) as LockKinds;
}

/** A kind whose grants wait for replica acknowledgements (re-entries and renewals do not). */
class ReplicaAckedKind implements LockKind {
  readonly tag: LockKindTag;
  readonly exclusive: boolean;
  readonly reentrant: boolean;
  readonly directedWakeupSleepMs?: number;
  /**
   * Cohorts stay on: a local hand-off writes nothing, and the grant it rides on (owner, lease and
   * the reserved fencing tokens) was acknowledged by WAIT before the first holder got it.
   */
  readonly cohorts?: boolean;
  readonly isExclusive?: (options: LockOptions) => boolean;
  readonly abandon?: (request: AttemptRequest) => Promise<void>;

  constructor(
    private readonly inner: LockKind,
    private readonly gateway: RedisGateway,
    private readonly acks: ReplicaAcks,
  ) {
    this.tag = inner.tag;
    this.exclusive = inner.exclusive;
    this.reentrant = inner.reentrant;
    this.directedWakeupSleepMs = inner.directedWakeupSleepMs;
    this.cohorts = inner.cohorts;
    // Optional hooks are forwarded only when the wrapped kind has them (the engine tests presence).
    if (inner.isExclusive) this.isExclusive = (options) => inner.isExclusive!(options);
    if (inner.abandon) this.abandon = (request) => inner.abandon!(request);
  }

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const result = await this.inner.attempt(r);
    if (result.status !== 'granted' || result.reentered) return result;
    const { count, timeoutMs, policy } = this.acks;
    let acked = 0;
    let failure: unknown;
    try {
      acked = await waitForReplicas(this.gateway, { redisKey: r.names.lock, key: r.key }, this.acks);
    } catch (err) {
      failure = err; // unknown counts as none acknowledged
    }
    if (acked < count && policy === 'require') {
      await this.inner.release(r).catch(() => undefined);
      throw new LockReplicationError(r.key, { acks: acked, required: count, timeoutMs }, failure);
    }
    return { ...result, replicaAcks: acked };
  }

  release(hold: HoldRef): Promise<ReleaseResult> {
    return this.inner.release(hold);
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return this.inner.renew(requests);
  }
}

/**
 * `WAIT count timeoutMs` on the connection that ran the grant (WAIT counts that connection's own
 * writes): the client itself, or on a Cluster the pooled connection to the master of the key's slot.
 */
export async function waitForReplicas(
  gateway: RedisGateway,
  lock: { readonly redisKey: string; readonly key: string },
  acks: { readonly count: number; readonly timeoutMs: number },
): Promise<number> {
  const { redisKey, key: userKey } = lock;
  const { count, timeoutMs } = acks;
  // WAIT blocks for up to timeoutMs by design; the deadline only guards against a dead connection.
  // The door sends it on the connection that ran the grant (on a Cluster: to the key's master).
  try {
    return Number(
      await gateway.ask(
        (door) => {
          try {
            return door.command(['WAIT', count, timeoutMs], redisKey);
          } catch (err) {
            throw new LockRedisError(
              `No connection to the master of lock ${quoteKey(userKey)} for WAIT`,
              userKey,
              err,
            );
          }
        },
        timeoutMs + 5000,
        () => new LockRedisError(`WAIT did not return for lock ${quoteKey(userKey)}`, userKey),
      ),
    );
  } catch (err) {
    throw toLockRedisError(err, 'WAIT', userKey);
  }
}
