import type { ScriptRunner } from '../redis/redis-gateway';
import { defineScript } from '../redis/script-library';
import { type LockKeyNames } from './key-space';
import {
  type LockKind,
  type AttemptRequest,
  type AttemptResult,
  type HoldRef,
  type ReleaseResult,
  type RenewRequest,
  type RenewResult,
} from './lock-kind';
import { AttemptReply, decodeAttemptReply, attemptCall, PublishCommand, releaseHold } from './script-replies';
import { MUTEX_RELEASE } from './reentrant-mutex';
import { renewInBatches } from './renew-batch';

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
    reserve: number,
    entry: string,
  ],
  AttemptReply
>('fair-acquire');
const ABANDON = defineScript<[entry: string, channel: string, publish: PublishCommand], 0 | 1>(
  'fair-abandon',
);
// The holder is a hash in the reentrant mutex's format, so release and renewal are the mutex's.

/** The waiter-deadline hash of a fair lock: derived from `aux`, so it keeps the lock's hash tag (slot). */
export function fairDeadlinesKey(names: LockKeyNames): string {
  return `${names.aux}:dl`;
}

/**
 * The queue entry of an attempt or abandon: the process with fair cohorts (the engine passes
 * `process` only then), else the waiter's own owner id.
 */
export function fairQueueEntry(r: Pick<AttemptRequest, 'owner' | 'process'>): string {
  return r.process !== undefined && r.process !== '' ? r.process : r.owner;
}

/**
 * Fair lock (`fair: true`): granted in arrival order across all processes, like Redisson's RFairLock.
 *
 * Redis layout: the `fair` hash is the holder in the mutex's format { owner, fence, <hold id> = 1 };
 * the `fair:aux` zset is the queue (entry → ticket, arrival order) and `fair:aux:dl` each entry's
 * deadline by the server clock. Every attempt keeps its entry's place and pushes its deadline
 * `waiterTtlMs` ahead; only the head may take the free lock; a head whose deadline passed (the
 * waiter died or froze) is dropped by the next attempt of anyone, and a waiter that gives up leaves
 * at once (abandon), so nobody stalls the queue for longer than one waiter ttl.
 *
 * Without fair cohorts (the default) every local waiter attempts (exclusive = false) and holds its
 * own entry, which makes the order exact per waiter. With fair cohorts (`cohort: { fair: true }`)
 * the entry is the process: only its head local waiter attempts (exclusive = true), the others queue
 * in the local FIFO, and a release hands the lock to the next local waiter without Redis within the
 * cohort bounds (as for the mutex), then the lock goes to the next process in the Redis queue.
 *
 * Fencing: each grant takes the key's next token (a cohort grant reserves its hand-offs' tokens).
 */
export class FairLock implements LockKind {
  readonly tag = 'fair' as const;
  /** With fair cohorts only the local head waiter attempts (for the process' entry). */
  readonly exclusive: boolean;
  readonly reentrant = true;
  /** Fair cohorts: grants reserve fencing tokens for local hand-offs. */
  readonly cohorts: boolean;
  /** Releases wake only the queue's head; the others refresh their place twice per waiter ttl. */
  readonly directedWakeupSleepMs: number;

  constructor(
    private readonly gateway: ScriptRunner,
    private readonly fenceTtlMs: number,
    private readonly waiterTtlMs: number,
    cohorts = false,
  ) {
    this.directedWakeupSleepMs = Math.max(1, Math.floor(waiterTtlMs / 2));
    this.exclusive = this.cohorts = cohorts;
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
        r.reserveTokens ?? 1,
        r.process ?? '',
      ],
      // A process' entry is shared by its local waiters: the last one to give up takes it out.
      attemptCall(this, r, fairQueueEntry(r) === r.owner ? this : undefined),
    );
    return decodeAttemptReply(reply, r.key, keys);
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    // KEYS[2] (the mutex's waiters) is not read when always publishing; the queue is in the same slot.
    // A cohort's end (yieldTo) reserves nothing here: the queue already gives the lock to its head.
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
        [fairQueueEntry(r), r.names.channel, this.gateway.publishCommand],
        { userKey: r.key },
      )
      .catch(() => undefined); // the place expires by itself at its deadline
  }
}
