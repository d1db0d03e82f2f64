/** What DistributedLockService.health() reports. */
export interface DistributedLockHealth {
  /** `up` when Redis answered PING and the service is open; `down` otherwise. */
  status: 'up' | 'down';
  /** Round trip of a PING in ms (the slowest connection); `null` when Redis did not answer or was not pinged. */
  redis: number | null;
  /** Locks this service holds now. */
  held: number;
  /** Locks this service has local waiters for now. */
  waiting: number;
  /**
   * What Redis refuses this service (an ACL without the inspection commands of docs/SECURITY.md),
   * e.g. `force-release notices: NOPERM …`. Locks still work, so the status stays `up`.
   */
  refused?: string[];
  /** Why the status is `down`. */
  error?: string;
}
