import type { LockLostError } from '../errors';
import type { HoldRef, ReleaseResult } from '../kinds/lock-kind';
import type { LockGrant } from './lock-grant';

/** What a grant needs from the engine that issued it. */
export interface GrantHost {
  readonly engineId: string;
  onGrantEnded(grant: LockGrant): void;
  onReleased(grant: LockGrant, result: ReleaseResult | 'failed', error?: unknown): void;
  /** Retries a release that failed on a Redis error, in the background, until `untilMonotonic`. */
  retryRelease(grant: LockGrant, hold: HoldRef, untilMonotonic: number): void;
  onLost(grant: LockGrant, error: LockLostError): void;
  /** Hands the lock to a local waiter instead of releasing it in Redis (cohorts); false: release. */
  handOff(grant: LockGrant): boolean;
  extend(grant: LockGrant, leaseMs: number): Promise<void>;
}
