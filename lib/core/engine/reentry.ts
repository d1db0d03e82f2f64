import { LockLostError, LockNotAcquiredError, LockUpgradeError } from '../errors';
import type { LockEvents } from '../events/lock-events';
import { GrantHandle } from '../grant/grant-handle';
import type { LockGrant } from '../grant/lock-grant';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';
import type { Runtime } from '../runtime/runtime';

/** What a re-entering call asks for (a LockCall). */
export interface ReentryCall {
  readonly kind: LockKind;
  readonly kindLabel: string;
  readonly options: LockOptions;
  readonly tryOnly: boolean;
}

/**
 * The one re-entry path: this async context holds every grant of `grants` (one key or all keys of
 * a multi-key call), so each gets one more hold in Redis with the grant's owner and token, and the
 * lease moves to at least the grant's lease from now. A grant Redis no longer has is lost (its
 * signal aborts) and the call fails with that loss; holds taken before it are given back.
 */
export async function reenter(
  grants: readonly LockGrant[],
  call: ReentryCall,
  events: LockEvents,
  runtime: Runtime,
): Promise<GrantHandle[] | null> {
  const { kind, options } = call;
  const refused = grants.find((g) => !kind.reentrant || !g.kind.reentrant);
  if (refused) {
    if (call.tryOnly) return null;
    throw new LockNotAcquiredError(refused.key, 0, -1, {
      reason: 'this async context already holds it and it is not reentrant',
    });
  }
  const upgrade = grants.find((g) => g.options.mode === 'read' && options.mode === 'write');
  if (upgrade) throw new LockUpgradeError(upgrade.key);
  const started = runtime.now();
  const handles: GrantHandle[] = [];
  try {
    for (const grant of grants) {
      const holdId = runtime.randomId();
      const sentAt = runtime.now();
      const result = await kind.attempt({
        key: grant.key,
        names: grant.names,
        owner: grant.owner,
        holdId,
        leaseMs: grant.leaseMs,
        reenter: true,
        options,
      });
      if (result.status !== 'granted') {
        grant.lose('expired');
        throw grant.lost ?? new LockLostError(grant.key, 'expired');
      }
      grant.reentered(sentAt);
      handles.push(new GrantHandle(grant, holdId));
    }
  } catch (err) {
    await Promise.all(handles.map((h) => h.release()));
    throw err;
  }
  if (events.wants('acquired')) {
    for (const h of handles) {
      events.safeEmit('acquired', {
        key: h.key,
        kind: call.kindLabel,
        waitedMs: runtime.now() - started,
        attempts: 1,
        reentered: true,
        fencingToken: h.fencingToken,
      });
    }
  }
  return handles;
}
