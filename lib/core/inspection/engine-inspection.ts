import type { HeldLocks } from '../grant/held-locks';
import type { KeySpace } from '../kinds/key-space';
import type { LockEvents } from '../events/lock-events';
import type { ResolvedEngineOptions } from '../options/lock-options';
import type { LocalWaitQueues } from '../waiting/local-wait-queues';
import { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import { LockInspector } from './lock-inspector';
import { LockRegistry } from './lock-registry';
import { NoticeSubscription, type NoticeSubscriptionDeps } from './notice-subscription';
import { ownerIdentity } from './owner-identity';
import type { Runtime } from '../runtime/runtime';

/** What an engine gives its inspection. */
export interface EngineInspectionParts {
  readonly engineId: string;
  readonly runtime: Runtime;
  /** The backend's inspection side, when it has one (not the in-memory testing backend). */
  readonly target: InspectionTarget | undefined;
  readonly options: ResolvedEngineOptions;
  readonly keys: KeySpace;
  readonly held: HeldLocks;
  readonly queues: LocalWaitQueues;
  readonly events: LockEvents;
}

/**
 * One engine's inspection: the inspector, its force-release notice channel (subscribed once the
 * engine's first lock call has answered, and kept to close, so a holder hears a force release of its
 * grant whatever the grant's age), and its registry entry unless `inspection: false`.
 */
export class EngineInspection {
  readonly inspector: LockInspector;
  /** This engine's record in the registry of held locks (none with `inspection: false`). */
  readonly registry?: LockRegistry;
  private closed = false;
  private notices?: NoticeSubscription;
  private readonly noticeDeps: NoticeSubscriptionDeps;

  private constructor(parts: EngineInspectionParts) {
    const { engineId, runtime, options, keys, held, queues, events } = parts;
    const target = parts.target!;
    const identity = ownerIdentity(engineId, options.app);
    const inspectionKeys = new InspectionKeys(options.keyPrefix);
    this.inspector = new LockInspector({
      engineId,
      runtime,
      identity,
      keys,
      inspectionKeys,
      target,
      grants: held.grants,
      events,
      fenceTtlMs: options.fenceTtlMs,
    });
    // A notice can overtake its grant's reply: the grant is checked as it arrives.
    held.onAdd = (grant) => this.inspector.onGrant(grant);
    held.forcedBefore = (owner, lock) => this.inspector.takeEarlyNotice(owner, lock);
    this.noticeDeps = {
      runtime,
      target,
      channel: inspectionKeys.notice(engineId),
      commandTimeoutMs: options.commandTimeoutMs,
      onNotice: (message) => this.inspector.onNotice(message),
      onRefusal: (reason) => events.safeEmit('refusal', { what: 'force-release notices', reason }),
    };
    if (options.inspection) {
      this.registry = new LockRegistry({
        engineId,
        runtime,
        identity,
        keys: inspectionKeys,
        target,
        grants: held.grants,
        queues,
        heartbeatMs: options.renewEveryMs,
        commandTimeoutMs: options.commandTimeoutMs,
        baseTtlMs: options.watchdogLeaseMs + options.renewEveryMs,
        onRefusal: (reason) => events.safeEmit('refusal', { what: 'lock registry', reason }),
      });
    }
  }

  /** Inspection for an engine whose backend supports it (not the in-memory testing backend). */
  static open(parts: EngineInspectionParts): EngineInspection | undefined {
    return parts.target ? new EngineInspection(parts) : undefined;
  }

  /**
   * Subscribes to this engine's force-release notices, once: called when the first lock call has
   * answered (so the first call does not share its start with a new subscriber connection), which
   * confirms it within milliseconds of the first grant. Not at construction: an engine that never locks
   * (a failed start-up, a refused first call) sends nothing.
   */
  listenForNotices(): void {
    if (this.notices || this.closed) return;
    // Called in the first caller's context; the subscription and its retries are the engine's own.
    this.notices = this.noticeDeps.runtime.detached(() => new NoticeSubscription(this.noticeDeps));
  }

  /** Removes this engine's record, stops its timer and its notices (before the backend closes). */
  async close(): Promise<void> {
    this.closed = true;
    await this.registry?.close();
    this.notices?.close();
  }
}
