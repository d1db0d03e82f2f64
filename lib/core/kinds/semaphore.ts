import type {
  LockKind,
  AttemptRequest,
  AttemptResult,
  HoldRef,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from './lock-kind';
import { ATTEMPT_MARGIN_MS } from '../runtime/with-deadline';
import type { ScriptRunner } from '../redis/redis-gateway';
import { defineScript } from '../redis/script-library';
import {
  AttemptReply,
  decodeAttemptReply,
  HoldReleaseArgs,
  HoldReleaseReply,
  attemptCall,
  PublishCommand,
  releaseHold,
} from './script-replies';
import { HOLDERS_RENEW, renewPerSlot } from './renew-batch';

const ACQUIRE = defineScript<
  [
    owner: string,
    holdId: string,
    limit: number,
    leaseMs: number,
    fenceTtlMs: number,
    reenterOnly: '0' | '1',
    channel: string,
    publish: PublishCommand,
    permits: number,
    reservationTtlMs: number,
  ],
  AttemptReply
>('semaphore-acquire');
const RELEASE = defineScript<HoldReleaseArgs, HoldReleaseReply>('semaphore-release');
/** Drops a waiter's permit reservation (the same fields as the read-write writer-waiting marker). */
const ABANDON = defineScript<[owner: string, channel: string, publish: PublishCommand], 0 | 1>(
  'read-write-abandon',
);

/**
 * Counting semaphore (`limit: n`): at most n holders per key at once.
 *
 * Redis layout (scripts/holders.lua): the `sem:aux` zset has one entry per permit, owner → its own
 * lease deadline by the server clock; permits whose lease ran out are taken back on every access.
 * The `sem` hash keeps each owner's open holds: a permit is reentrant, so a call inside the
 * critical section that asks for the same key again nests on the permit it already has instead of
 * taking a second one (which could deadlock when all n are held by the callers' own contexts).
 *
 * Several permits (`permits: n`) are taken all or none and given back together; a request refused
 * for lack of room reserves what it needs so smaller requests cannot starve it (see the script).
 *
 * Fencing: each permit takes the next token of the key's semaphore, so tokens increase across all its holders; with n > 1
 * holders at once a token orders grants but proves no exclusive access.
 */
export class Semaphore implements LockKind {
  readonly tag = 'sem' as const;
  /** Several local waiters may attempt at once: several may win. */
  readonly exclusive = false;
  readonly reentrant = true;

  constructor(
    private readonly gateway: ScriptRunner,
    private readonly fenceTtlMs: number,
    /** How long a permit reservation lives without a refresh (see waiterTtlMs). */
    private readonly reservationTtlMs: number,
  ) {}

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.gateway.run(
      ACQUIRE,
      [r.names.lock, r.names.aux, r.names.fence],
      [
        r.owner,
        r.holdId,
        r.options.limit ?? 1,
        r.leaseMs,
        this.fenceTtlMs,
        r.reenter ? '1' : '0',
        r.names.channel,
        this.gateway.publishCommand,
        r.options.permits ?? 1,
        this.willWait(r) ? this.reservationTtlMs : 0,
      ],
      attemptCall(this, r, this),
    );
    return decodeAttemptReply(reply, r.key, [r.names.lock, r.names.aux]);
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    return releaseHold(this.gateway, RELEASE, h);
  }

  /**
   * Only a caller with time left to wait reserves permits: a tryAcquire (or a last attempt at the
   * deadline) that is refused must not hold others back, even until its abandon() lands.
   */
  private willWait(r: AttemptRequest): boolean {
    return r.timeoutMs === undefined || r.timeoutMs - ATTEMPT_MARGIN_MS > 1;
  }

  /** A waiter that gave up drops its reservation, so the smaller requests it held back go on. */
  async abandon(r: AttemptRequest): Promise<void> {
    await this.gateway
      .run(ABANDON, [r.names.lock, r.names.aux], [r.owner, r.names.channel, this.gateway.publishCommand], {
        userKey: r.key,
      })
      .catch(() => undefined); // the reservation expires on its own
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return renewPerSlot(this.gateway, HOLDERS_RENEW, requests, (r) => [r.names.lock, r.names.aux]);
  }
}
