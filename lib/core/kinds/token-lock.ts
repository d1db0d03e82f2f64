import {
  LockKind,
  AttemptRequest,
  AttemptResult,
  HoldRef,
  ReleaseResult,
  RenewRequest,
  RenewResult,
} from './lock-kind';
import type { ScriptRunner } from '../redis/redis-gateway';
import { renewInBatches } from './renew-batch';
import { defineScript } from '../redis/script-library';
import { AttemptReply, attemptCall, decodeAttemptReply, PublishCommand } from './script-replies';

const ACQUIRE = defineScript<
  [owner: string, leaseMs: number, fenceTtlMs: number, reserve: number],
  AttemptReply
>('token-acquire');
const RELEASE = defineScript<[owner: string, channel: string, publish: PublishCommand], 0 | 1>(
  'token-release',
);

/**
 * The plain token lock (`reentrant: false`): SET NX PX with a random owner token, compare-and-delete
 * release. Shares its Redis key with the reentrant mutex, so the two exclude each other.
 */
export class TokenLock implements LockKind {
  readonly tag = 'm' as const;
  readonly exclusive = true;
  readonly reentrant = false;
  /** Grants reserve fencing tokens for per-process cohorts (local hand-offs). */
  readonly cohorts = true;

  constructor(
    private readonly gateway: ScriptRunner,
    private readonly fenceTtlMs: number,
  ) {}

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.gateway.run(
      ACQUIRE,
      [r.names.lock, r.names.fence],
      [r.owner, r.leaseMs, this.fenceTtlMs, r.reserveTokens ?? 1],
      attemptCall(this, r),
    );
    return decodeAttemptReply(reply, r.key, [r.names.lock]);
  }

  async release(h: HoldRef): Promise<ReleaseResult> {
    const reply = await this.gateway.run(
      RELEASE,
      [h.names.lock],
      [h.owner, h.names.channel, this.gateway.publishCommand],
      { userKey: h.key },
    );
    return reply === 1 ? 'released' : 'not-held';
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return renewInBatches(this.gateway, requests);
  }
}
