import { GrantHandle, type LockHandle } from '../grant/grant-handle';

/** Several locks taken together (all or none) by one multi-key acquire. */
export interface MultiLockHandle {
  /** The locked keys: de-duplicated, in the global order they were taken in. */
  readonly keys: readonly string[];
  /** key → fencing token; each strictly increases per key (mutex lock) across all holders, single- or multi-key. */
  readonly fencingTokens: Readonly<Record<string, number>>;
  /** Aborted (reason: the first key's LockLostError) the moment any of the keys is known lost. */
  readonly signal: AbortSignal;
  /** One handle per key, in `keys` order (to hand a single key's token or signal on). */
  readonly handles: readonly LockHandle[];
  /** True until released, or until any key is lost. */
  readonly isHeld: boolean;
  /** Releases every key. Resolves false, never throws, when any of them was no longer held. */
  release(): Promise<boolean>;
  /** Extends every key's lease; rejects with the first key's LockLostError when any is no longer held. */
  extend(leaseMs?: number): Promise<void>;
  /** Milliseconds left of the shortest lease (0 when any key is lost or released). */
  remainingMs(): number;
}

/** The handle of one multi-key hold: a GrantHandle per key, sharing owner and hold id. */
export class MultiGrantHandle implements MultiLockHandle {
  readonly keys: readonly string[];
  readonly fencingTokens: Readonly<Record<string, number>>;
  private combined?: AbortSignal;
  private released = false;

  constructor(readonly handles: readonly GrantHandle[]) {
    this.keys = Object.freeze(handles.map((h) => h.key));
    this.fencingTokens = Object.freeze(Object.fromEntries(handles.map((h) => [h.key, h.fencingToken])));
  }

  get signal(): AbortSignal {
    this.combined ??= AbortSignal.any(this.handles.map((h) => h.signal));
    return this.combined;
  }

  get isHeld(): boolean {
    return !this.released && this.handles.every((h) => h.isHeld);
  }

  remainingMs(): number {
    return this.isHeld ? Math.min(...this.handles.map((h) => h.remainingMs())) : 0;
  }

  async release(): Promise<boolean> {
    if (this.released) return false;
    this.released = true;
    const results = await Promise.all(this.handles.map((h) => h.release()));
    return results.every(Boolean);
  }

  async extend(leaseMs?: number): Promise<void> {
    const settled = await Promise.allSettled(this.handles.map((h) => h.extend(leaseMs)));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
