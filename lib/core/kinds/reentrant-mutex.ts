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
import {
  AttemptReply,
  decodeAttemptReply,
  MutexReleaseArgs,
  HoldReleaseReply,
  lateReplyAction,
  releaseHold,
} from './lock-kind';

const ACQUIRE = defineScript<
  [
    owner: string,
    holdId: string,
    leaseMs: number,
    fenceTtlMs: number,
    reenterOnly: '0' | '1',
    reserve: number,
    process: string,
    recordedWaiting: '0' | '1',
  ],
  AttemptReply
>('mutex-acquire');
export const MUTEX_RELEASE = defineScript<MutexReleaseArgs, HoldReleaseReply>('mutex-release');

/** The default lock: reentrant mutex on a Redis hash (owner, fence, one field per hold). */
export class ReentrantMutex implements LockKind {
  readonly tag = 'm' as const;
  readonly exclusive = true;
  readonly reentrant = true;
  /** Grants reserve fencing tokens for per-process cohorts (local hand-offs). */
  readonly cohorts = true;

  constructor(
    private readonly gateway: ScriptRunner,
    private readonly fenceTtlMs: number,
  ) {}

  async attempt(r: AttemptRequest): Promise<AttemptResult> {
    const reply = await this.gateway.run(
      ACQUIRE,
      [r.names.lock, r.names.fence, r.names.aux],
      [
        r.owner,
        r.holdId,
        r.leaseMs,
        this.fenceTtlMs,
        r.reenter ? '1' : '0',
        r.reserveTokens ?? 1,
        r.process ?? '',
        r.recordedWaiting === false ? '0' : '1',
      ],
      {
        userKey: r.key,
        onLateReply: (late) => {
          if (lateReplyAction(late) === 'release') this.release(r).catch(() => undefined);
        },
        timeoutMs: r.timeoutMs,
      },
    );
    return decodeAttemptReply(reply, r.key, [r.names.lock]);
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    return releaseHold(this.gateway, MUTEX_RELEASE, h, '0');
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return renewInBatches(this.gateway, requests);
  }
}
