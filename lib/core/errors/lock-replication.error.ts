import { quoteKey } from './message-text';
import { LockRedisError } from './lock-redis.error';

/**
 * `replicas.policy: 'require'`: fewer replicas than `replicas.count` acknowledged a grant (WAIT)
 * within `replicas.timeoutMs`. The grant was released again; nothing is held.
 */
export class LockReplicationError extends LockRedisError {
  /** Replicas that acknowledged the grant. */
  readonly acks: number;
  /** Replicas that had to acknowledge it (`replicas.count`). */
  readonly required: number;

  constructor(
    key: string,
    vote: { readonly acks: number; readonly required: number; readonly timeoutMs: number },
    cause?: unknown,
  ) {
    const { acks, required, timeoutMs } = vote;
    super(
      `Lock ${quoteKey(key)} not acquired: only ${acks} of ${required} required replica(s) acknowledged the grant ` +
        `within ${timeoutMs} ms (replicas.policy 'require'); the grant was released`,
      key,
      cause,
    );
    this.acks = acks;
    this.required = required;
  }
}
