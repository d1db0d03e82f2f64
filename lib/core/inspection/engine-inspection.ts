import type { HeldLocks } from '../grant/held-locks';
import type { KeySpace } from '../kinds/key-space';
import type { LockEvents } from '../events/lock-events';
import type { ResolvedEngineOptions } from '../options/lock-options';
import type { LocalWaitQueues } from '../waiting/local-wait-queues';
import { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import { LockInspector } from './lock-inspector';
import { LockRegistry } from './lock-registry';
import { ownerIdentity } from './owner-identity';

/** What an engine gives its inspection. */
export interface EngineInspectionParts {
  readonly engineId: string;
  /** The backend's inspection side, when it has one (not the in-memory testing backend). */
  readonly target: InspectionTarget | undefined;
  readonly options: ResolvedEngineOptions;
  readonly keys: KeySpace;
  readonly held: HeldLocks;
  readonly queues: LocalWaitQueues;
  readonly events: LockEvents;
}

/** One engine's inspection: the inspector, and its registry entry unless `inspection: false`. */
export class EngineInspection {
  readonly inspector: LockInspector;
  /** This engine's record in the registry of held locks (none with `inspection: false`). */
  readonly registry?: LockRegistry;

  private constructor(parts: EngineInspectionParts) {
    const { engineId, options, keys, held, queues, events } = parts;
    const target = parts.target!;
    const identity = ownerIdentity(engineId, options.app);
    const inspectionKeys = new InspectionKeys(options.keyPrefix);
    this.inspector = new LockInspector({
      engineId,
      identity,
      keys,
      inspectionKeys,
      target,
      grants: held.grants,
      events,
      fenceTtlMs: options.fenceTtlMs,
    });
    if (options.inspection) {
      this.registry = new LockRegistry({
        engineId,
        identity,
        keys: inspectionKeys,
        target,
        grants: held.grants,
        queues,
        heartbeatMs: options.renewEveryMs,
        commandTimeoutMs: options.commandTimeoutMs,
        baseTtlMs: options.watchdogLeaseMs + options.renewEveryMs,
        onNotice: (message) => this.inspector.onNotice(message),
        onRefusal: (what, reason) => events.safeEmit('refusal', { what, reason }),
      });
    }
  }

  /** Inspection for an engine whose backend supports it (not the in-memory testing backend). */
  static open(parts: EngineInspectionParts): EngineInspection | undefined {
    return parts.target ? new EngineInspection(parts) : undefined;
  }

  /** Removes this engine's record and stops its timer (before the backend closes). */
  close(): Promise<void> {
    return this.registry?.close() ?? Promise.resolve();
  }
}
