import type { LockKeyNames } from '../kinds/key-space';
import type { LockKind } from '../kinds/lock-kind';
import type { LockOptions } from '../options/lock-options';

/** One key of a multi-key call, with its Redis names. */
export interface MultiLockTarget {
  readonly key: string;
  readonly names: LockKeyNames;
}

/** One all-or-none attempt on a group of keys that a single call can take atomically. */
export interface GroupAttempt {
  readonly targets: readonly MultiLockTarget[];
  readonly kind: LockKind;
  readonly owner: string;
  readonly holdId: string;
  readonly leaseMs: number;
  readonly options: LockOptions;
  /** The attempt settles within this (capped by the command timeout). */
  readonly timeoutMs: number;
}

/** Granted: one fencing token per target, in order. Busy: which target was held, and for how long. */
export type GroupResult =
  { status: 'granted'; fencingTokens: number[] } | { status: 'busy'; index: number; retryAfterMs: number };

/**
 * Takes groups of keys all or none. A backend that can take several keys in one atomic call
 * (one Redis, or one Cluster slot) provides one; others get PerKeyLocker (one key per group).
 */
export interface MultiKeyLocker {
  /** Splits targets (already in the global order) into atomic groups, keeping that order. */
  groups(targets: readonly MultiLockTarget[]): MultiLockTarget[][];
  attempt(request: GroupAttempt): Promise<GroupResult>;
}

/**
 * The fallback for backends without a multi-key script (the in-memory testing backend, RedLock):
 * every key is its own group, taken with the kind's ordinary attempt. Still all or none and
 * deadlock-free, because MultiAcquisition gives back what it took before it waits.
 */
export class PerKeyLocker implements MultiKeyLocker {
  groups(targets: readonly MultiLockTarget[]): MultiLockTarget[][] {
    return targets.map((t) => [t]);
  }

  async attempt(r: GroupAttempt): Promise<GroupResult> {
    const [target] = r.targets;
    const result = await r.kind.attempt({
      key: target!.key,
      names: target!.names,
      owner: r.owner,
      holdId: r.holdId,
      leaseMs: r.leaseMs,
      reenter: false,
      options: r.options,
      timeoutMs: r.timeoutMs,
    });
    if (result.status === 'granted') return { status: 'granted', fencingTokens: [result.fencingToken] };
    return { status: 'busy', index: 0, retryAfterMs: result.status === 'busy' ? result.retryAfterMs : -1 };
  }
}
