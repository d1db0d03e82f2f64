import { defineScript } from '../redis/script-library';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import type { LockOwner } from '../options/lock-info';
import { onNodes } from './node-calls';
import { engineOf } from './owner-identity';
import { parseRecord, type EngineRecord, type GrantEntry } from './registry-record';

const READ_REGISTRY = defineScript<[recordPrefix: string], (string | string[])[]>('registry-read');

/** The registry as read: every live engine's record, and grant entries by owner and lock name. */
export class RegistrySnapshot {
  readonly engines = new Map<string, EngineRecord>();
  private readonly grants = new Map<string, GrantEntry>();

  /** Adds one engine's record (the first one read wins: RedLock nodes may have older copies). */
  add(engineId: string, flat: string[]): void {
    if (this.engines.has(engineId)) return;
    const record = parseRecord(engineId, flat);
    this.engines.set(engineId, record);
    for (const g of record.grants) this.grants.set(grantKey(g.o, g.l), g);
  }

  /** Every grant entry of every engine. */
  allGrants(): IterableIterator<GrantEntry> {
    return this.grants.values();
  }

  /** The entry of the grant with this owner id on this lock, if its engine reported it. */
  grant(ownerId: string, lockName: string): GrantEntry | undefined {
    return this.grants.get(grantKey(ownerId, lockName));
  }

  /** The engine behind an owner id or engine id (host '' and pid 0 when it has no record). */
  owner(ownerOrEngineId: string): LockOwner {
    const engine = engineOf(ownerOrEngineId);
    return this.engines.get(engine)?.owner ?? { engine, host: '', pid: 0, app: '' };
  }
}

/** Reads every live engine record (RedLock: the union over the nodes that answer). One call per node. */
export async function readRegistry(
  target: InspectionTarget,
  keys: InspectionKeys,
): Promise<RegistrySnapshot> {
  const replies = await onNodes(target, (g) => g.run(READ_REGISTRY, [keys.engines], [keys.enginePrefix]), 1);
  const snapshot = new RegistrySnapshot();
  for (const reply of replies) {
    for (let i = 0; i + 1 < reply.length; i += 2) snapshot.add(String(reply[i]), reply[i + 1] as string[]);
  }
  return snapshot;
}

function grantKey(ownerId: string, lockName: string): string {
  return `${ownerId}\u0000${lockName}`;
}
