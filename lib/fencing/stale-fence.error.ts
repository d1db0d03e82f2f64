import { LockError } from '../core/public';

/** What the storage held when it refused a write: the last accepted writer's fence and owner. */
export interface StoredFence {
  readonly token: number | bigint;
  readonly owner: string;
}

/**
 * A write carried a fencing token lower than the storage's, or equal to it from another owner: the
 * writer's lock was lost (or handed to a later holder) and nothing was written.
 */
export class StaleFenceError extends LockError {
  /** The writer's fencing token. */
  readonly token: number | bigint;
  /** The writer's owner id. */
  readonly owner: string;
  /** The stored fence that refused the write; null when it could not be read back. */
  readonly storedFence: number | bigint | null;
  /** The owner of the stored fence; null when it could not be read back. */
  readonly storedOwner: string | null;

  constructor(key: string, write: StoredFence, stored: StoredFence | null) {
    super(
      `Stale fencing token for ${JSON.stringify(key)}: token ${write.token} was refused, ` +
        (stored
          ? `the storage holds fence ${stored.token}` +
            (stored.token === write.token ? ' from another owner' : '')
          : 'and the stored fence could not be read back') +
        '; nothing was written',
      key,
    );
    this.token = write.token;
    this.owner = write.owner;
    this.storedFence = stored?.token ?? null;
    this.storedOwner = stored?.owner ?? null;
  }
}
