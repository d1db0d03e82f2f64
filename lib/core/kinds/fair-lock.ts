import type { LockKeyNames } from './key-space';
import type {
  LockKind,
  AttemptRequest,
  AttemptResult,
  HoldRef,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from './lock-kind';
import { RedisGateway } from '../redis/redis-gateway';
import { renewInBatches } from './renew-batch';
import { MUTEX_RELEASE } from './reentrant-mutex';
import { defineScript } from '../redis/script-library';
import { AttemptReply, decodeAttemptReply, lateReplyAction, PublishCommand, releaseHold } from './reply';

const ACQUIRE = defineScript<
  [
    owner: string,
    holdId: string,
    leaseMs: number,
    fenceTtlMs: number,
    reenterOnly: '0' | '1',
    waiterTtlMs: number,
    channel: string,
    publish: PublishCommand,
  ],
  AttemptReply
>('fair-acquire');
const ABANDON = defineScript<[owner: string, channel: string, publish: PublishCommand], 0 | 1>(
  'fair-abandon',
);
// The holder is a hash in the reentrant mutex's format, so release and renewal are the mutex's.

/** The waiter-deadline hash of a fair lock: derived from `aux`, so it keeps the lock's hash tag (slot). */
export function fairDeadlinesKey(names: LockKeyNames): string {
  return `${names.aux}:dl`;
}

/**
 * Fair lock (`fair: true`): granted in arrival order across all processes, like Redisson's RFairLock.
 *
 * Redis layout: the `fair` hash is the holder in the mutex's format { owner, fence, <hold id> = 1 };
 * the `fair:aux` zset is the queue (waiter → ticket, arrival order) and `fair:aux:dl` each waiter's
 * deadline by the server clock. Every attempt of a waiter keeps its place and pushes its deadline
 * `waiterTtlMs` ahead; only the head may take the free lock; a head whose deadline passed (the
 * waiter died or froze) is dropped by the next attempt of anyone, and a waiter that gives up leaves
 * at once (abandon), so nobody stalls the queue for longer than one waiter ttl.
 *
 * Every local waiter attempts (exclusive = false): each must hold its own place in the Redis queue,
 * which is what makes the order exact within a process too. The price: a release wakes every local
 * waiter for one attempt each, and only the head wins.
 *
 * Fencing: each grant takes the key's next token, as for the mutex.
 */
export class FairLock implements LockKind {
  readonly tag = 'fair' as const;
  readonly exclusive = false;
  readonly reentrant = true;
  /** Releases wake only the queue's head; the others refresh their place twice per waiter ttl. */
  readonly directedWakeupSleepMs: number;

  constructor(
    private readonly gateway: RedisGateway,
    private readonly fenceTtlMs: number,
    private readonly waiterTtlMs: number,
  ) {
    this.directedWakeupSleepMs = Math.max(1, Math.floor(waiterTtlMs / 2));
  }

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const keys = [r.names.lock, r.names.aux, fairDeadlinesKey(r.names), r.names.fence];
    const reply = await this.gateway.run(
      ACQUIRE,
      keys,
      [
        r.owner,
        r.holdId,
        r.leaseMs,
        this.fenceTtlMs,
        r.reenter ? '1' : '0',
        this.waiterTtlMs,
        r.names.channel,
        this.gateway.publishCommand,
      ],
      {
        userKey: r.key,
        onLateReply: (late) => {
          const action = lateReplyAction(late);
          if (action === 'release') this.release(r).catch(() => undefined);
          if (action === 'abandon') void this.abandon(r);
        },
        timeoutMs: r.timeoutMs,
      },
    );
    return decodeAttemptReply(reply, r.key, keys);
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    // KEYS[2] (the mutex's waiters) is not read when always publishing; the queue is in the same slot.
    return releaseHold(this.gateway, MUTEX_RELEASE, h, '1');
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return renewInBatches(this.gateway, requests);
  }

  async abandon(r: AttemptRequest): Promise<void> {
    await this.gateway
      .run(
        ABANDON,
        [r.names.lock, r.names.aux, fairDeadlinesKey(r.names)],
        [r.owner, r.names.channel, this.gateway.publishCommand],
        { userKey: r.key },
      )
      .catch(() => undefined); // the place expires by itself at its deadline
  }
}
