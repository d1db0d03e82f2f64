import { LockServiceClosedError } from '../errors';
import { EngineInspection, type EngineInspectionParts } from './engine-inspection';
import type {
  ForceReleaseLogOptions,
  ForceReleaseOptions,
  ForceReleaseRecord,
  InspectLockOptions,
  ListLocksOptions,
  ListLocksResult,
  LockInfo,
} from './lock-info';
import type { LockInspector } from './lock-inspector';

/**
 * The operator's surface of a LockEngine (which extends this): isLocked, inspect, list,
 * forceRelease and the force-release log, delegated to the engine's EngineInspection. Each call
 * rejects with a TypeError on a backend without inspection (the in-memory testing backend) and with
 * LockServiceClosedError after close().
 */
export abstract class InspectableEngine {
  /** Undefined when the backend cannot be inspected. */
  private inspection?: EngineInspection;

  /** True once close() was called. */
  protected abstract get isClosing(): boolean;

  /** True when `key` is held, by any process (of any kind, or of `options.kind`). */
  async isLocked(key: string, options?: InspectLockOptions): Promise<boolean> {
    return this.inspector().isLocked(key, options);
  }

  /** Who holds `key` (owner, since when, until when, token, holds) and who waits; null when free. */
  async inspect(key: string, options?: InspectLockOptions): Promise<LockInfo | null> {
    return this.inspector().inspect(key, options);
  }

  /** Held locks across every process and node, a page at a time (from the registry; never KEYS/SCAN). */
  async list(options?: ListLocksOptions): Promise<ListLocksResult> {
    return this.inspector().list(options);
  }

  /**
   * Evicts the holders of `key`, advances its fencing token, wakes its waiters, aborts the holders'
   * signals ('force-released') and writes an audit entry. False when nothing was held.
   */
  async forceRelease(key: string, options: ForceReleaseOptions): Promise<boolean> {
    return this.inspector().forceRelease(key, options);
  }

  /** The newest force-release audit entries (of one key when `options.key` is given). */
  async forceReleases(options?: ForceReleaseLogOptions): Promise<ForceReleaseRecord[]> {
    return this.inspector().forceReleases(options);
  }

  /** Called once by the engine's constructor. */
  protected openInspection(parts: EngineInspectionParts): void {
    this.inspection = EngineInspection.open(parts);
  }

  /** Removes this engine's registry record (at shutdown, before the backend closes). */
  protected closeInspection(): Promise<void> {
    return this.inspection?.close() ?? Promise.resolve();
  }

  private inspector(): LockInspector {
    if (!this.inspection) {
      throw new TypeError('Inspection (list, inspect, forceRelease) is not supported by this lock backend');
    }
    if (this.isClosing) throw new LockServiceClosedError('closed');
    return this.inspection.inspector;
  }
}
