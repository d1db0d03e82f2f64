import { LockLostError, LockNotAcquiredError, LockUpgradeError } from '../errors';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import { kindName } from './held-locks';
import { monotonicMs, randomId } from './ids';
import type { LockEvents } from './lock-events';
import type { LockGrant } from './lock-grant';
import { GrantHandle, LockHandle } from './lock-handle';

/** A nested acquire by the async context that holds `grant`: one more hold, same token. */
export async function reenter(
  events: LockEvents,
  grant: LockGrant,
  request: { readonly kind: LockKind; readonly options: LockOptions; readonly tryOnly: boolean },
): Promise<LockHandle | null> {
  const { kind, options: opts, tryOnly } = request;
  const key = grant.key;
  if (!kind.reentrant || !grant.kind.reentrant) {
    if (tryOnly) return null;
    throw new LockNotAcquiredError(key, 0, -1, {
      reason: 'this async context already holds it and it is not reentrant',
    });
  }
  if (grant.options.mode === 'read' && opts.mode === 'write') throw new LockUpgradeError(key);
  const holdId = randomId();
  const started = monotonicMs();
  const result = await kind.attempt({
    key,
    names: grant.names,
    owner: grant.owner,
    holdId,
    leaseMs: grant.leaseMs,
    reenter: true,
    options: opts,
  });
  if (result.status !== 'granted') {
    grant.lose('expired');
    throw grant.lost ?? new LockLostError(key, 'expired');
  }
  grant.reentered(started);
  events.safeEmit('acquired', {
    key,
    kind: kindName(kind, opts),
    waitedMs: monotonicMs() - started,
    attempts: 1,
    reentered: true,
    fencingToken: grant.fencingToken,
  });
  return new GrantHandle(grant, holdId);
}
