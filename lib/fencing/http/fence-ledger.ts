import { admitsFence } from '../fence-rule';
import { toFence, type FenceSource } from '../fence';
import { StaleFenceError, type StoredFence } from '../stale-fence.error';

/**
 * Where a receiving service keeps the last admitted fence of each resource. `admit` records the
 * fence when the rule accepts it and throws StaleFenceError otherwise. RedisFencedStore is one
 * (shared by every replica); MemoryFenceLedger keeps them in this process.
 */
export interface FenceLedger {
  admit(resource: string, fence: FenceSource): Promise<void>;
}

/** The injection token of the ledger the HTTP guard uses (one import is type and token). */
export const FenceLedger = Symbol('FenceLedger');

/**
 * A FenceLedger in this process' memory: for a single replica, or tests. Entries stay while the
 * process runs (one per resource); a restart forgets them and accepts any token again.
 */
export class MemoryFenceLedger implements FenceLedger {
  private readonly fences = new Map<string, StoredFence>();

  async admit(resource: string, source: FenceSource): Promise<void> {
    const fence = toFence(source);
    const stored = this.fences.get(resource) ?? null;
    if (!admitsFence(stored, fence)) throw new StaleFenceError(fence.key, fence, stored);
    this.fences.set(resource, { token: fence.token, owner: fence.owner });
  }

  /** The last admitted fence of `resource`, or null. */
  storedFence(resource: string): StoredFence | null {
    return this.fences.get(resource) ?? null;
  }
}
