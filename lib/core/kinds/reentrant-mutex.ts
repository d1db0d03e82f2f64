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
  attemptCall,
  releaseHold,
} from './script-replies';

/** mutex-acquire.lua's ARGV: the trailing ones are left out when they hold their defaults. */
type MutexAcquireArgs = [
  owner: string,
  holdId: string,
  leaseMs: number,
  fenceTtlMs: number,
  ...(
    | []
    | [reserve: number]
    | [reserve: number, process: string]
    | [reserve: number, process: string, recordedWaiting: '1']
    | [reserve: number, process: string, recordedWaiting: '0' | '1', reenterOnly: '1']
  ),
];
const ACQUIRE = defineScript<MutexAcquireArgs, AttemptReply>('mutex-acquire');

/**
 * The arguments of one attempt, as few as say it: an uncontended fresh grant sends 4 (6 with cohorts),
 * a re-entry all 8. Every argument is one more string for the client to encode on every call.
 */
function acquireArgs(r: AttemptRequest, fenceTtlMs: number): MutexAcquireArgs {
  const { owner, holdId, leaseMs } = r;
  const reserve = r.reserveTokens ?? 1;
  const process = r.process ?? '';
  // Unknown counts as recorded: the grant then removes a waiter entry that may not be there.
  const recorded = r.recordedWaiting !== false;
  if (r.reenter) return [owner, holdId, leaseMs, fenceTtlMs, reserve, process, recorded ? '1' : '0', '1'];
  if (recorded) return [owner, holdId, leaseMs, fenceTtlMs, reserve, process, '1'];
  if (process !== '') return [owner, holdId, leaseMs, fenceTtlMs, reserve, process];
  if (reserve !== 1) return [owner, holdId, leaseMs, fenceTtlMs, reserve];
  return [owner, holdId, leaseMs, fenceTtlMs];
}
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

  // A promise chain, not an async function: one promise less on every attempt.
  attempt(r: AttemptRequest): Promise<AttemptResult> {
    return this.gateway
      .run(
        ACQUIRE,
        [r.names.lock, r.names.fence, r.names.aux],
        acquireArgs(r, this.fenceTtlMs),
        attemptCall(this, r),
      )
      .then((reply) => decodeAttemptReply(reply, r.key, [r.names.lock]));
  }

  release(h: HoldRef): Promise<ReleaseResult> {
    return releaseHold(this.gateway, MUTEX_RELEASE, h, '0');
  }

  renew(requests: readonly RenewRequest[]): Promise<RenewResult[]> {
    return renewInBatches(this.gateway, requests);
  }
}
