import type { AttemptResult } from '../kinds/lock-kind';
import type { AcquisitionContext, AcquisitionRequest } from './acquisition-context';
import { Cohort } from './cohort';
import { LockGrant } from './lock-grant';

/** Who asks: the owner id written to Redis, and this call's hold id. */
export interface AcquisitionIds {
  readonly owner: string;
  readonly holdId: string;
}

/** The hold one acquisition asks for (attempt, abandon), before any time bound. */
export function holdRequest(req: AcquisitionRequest, ids: AcquisitionIds) {
  const { key, names, options, leaseMs } = req;
  return { key, names, owner: ids.owner, holdId: ids.holdId, leaseMs, reenter: false, options };
}

/** The grant a granted attempt sent at `requestedAt` stands for; a fresh cohort grant opens a cohort. */
export function grantOf(
  ctx: AcquisitionContext,
  req: AcquisitionRequest,
  ids: AcquisitionIds,
  result: Extract<AttemptResult, { status: 'granted' }>,
  requestedAt: number,
  cohortKind: boolean,
): LockGrant {
  const { key, names, kind, options, leaseMs, watchdog } = req;
  const token = result.fencingToken;
  const cohort =
    cohortKind && watchdog && !result.reentered
      ? new Cohort(ids.holdId, token + 1, token + ctx.reserveTokens - 1, requestedAt)
      : undefined;
  return new LockGrant(ctx.held, kind, key, names, ids.owner, token, options, {
    leaseMs,
    watchdog,
    requestedAt,
    replicaAcks: result.replicaAcks,
    cohort,
  });
}
