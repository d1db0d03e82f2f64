import { ATTEMPT_MARGIN_MS, type AcquisitionContext } from '../engine/acquisition-context';
import type { AcquisitionIds } from '../engine/acquisition-grant';
import { monotonicMs } from '../engine/ids';
import { LockGrant } from '../engine/lock-grant';
import { GrantHandle } from '../engine/lock-handle';
import type { MultiAcquisitionRequest } from './multi-acquisition';
import type { MultiKeyLocker, MultiLockTarget } from './multi-key-locker';

/** How one round ended: every key taken, or the first busy one. */
export type Round =
  | { status: 'granted'; tokens: number[]; requestedAt: number }
  | { status: 'busy'; target: MultiLockTarget; retryAfterMs: number };

/**
 * One all-or-none round over every group, in order; gives back what it took unless all were granted.
 * Each command is bounded by `remaining()` (what is left of the wait) plus ATTEMPT_MARGIN_MS.
 */
export async function attemptRound(
  locker: MultiKeyLocker,
  req: MultiAcquisitionRequest,
  ids: AcquisitionIds,
  groups: MultiLockTarget[][],
  remaining: () => number,
): Promise<Round> {
  const requestedAt = monotonicMs();
  const tokens: number[] = [];
  const taken: MultiLockTarget[] = [];
  try {
    for (const group of groups) {
      const result = await locker.attempt({
        targets: group,
        kind: req.kind,
        owner: ids.owner,
        holdId: ids.holdId,
        leaseMs: req.leaseMs,
        options: req.options,
        timeoutMs: Math.max(1, remaining()) + ATTEMPT_MARGIN_MS,
      });
      if (result.status === 'busy') {
        await giveBack(req, ids, taken);
        return {
          status: 'busy',
          target: group[result.index] ?? group[0]!,
          retryAfterMs: result.retryAfterMs,
        };
      }
      tokens.push(...result.fencingTokens);
      taken.push(...group);
    }
  } catch (err) {
    await giveBack(req, ids, taken);
    throw err;
  }
  return { status: 'granted', tokens, requestedAt };
}

/**
 * Releases keys taken in a round that cannot complete. A release that fails (Redis down) is left
 * to the lease: the keys free themselves when it ends.
 */
export async function giveBack(
  req: MultiAcquisitionRequest,
  ids: AcquisitionIds,
  targets: readonly MultiLockTarget[],
): Promise<void> {
  const { kind, options } = req;
  await Promise.all(
    targets.map((t) =>
      kind
        .release({ key: t.key, names: t.names, owner: ids.owner, holdId: ids.holdId, options })
        .catch(() => undefined),
    ),
  );
}

/** The grants of a granted round, one per key, each held by the engine: their handles, in key order. */
export function grantRound(
  ctx: AcquisitionContext,
  req: MultiAcquisitionRequest,
  ids: AcquisitionIds,
  round: Extract<Round, { status: 'granted' }>,
): GrantHandle[] {
  const { targets, kind, options, leaseMs, watchdog } = req;
  return targets.map((t, i) => {
    const grant = new LockGrant(ctx.held, kind, t.key, t.names, ids.owner, round.tokens[i]!, options, {
      leaseMs,
      watchdog,
      requestedAt: round.requestedAt,
    });
    ctx.held.add(grant);
    return new GrantHandle(grant, ids.holdId);
  });
}
