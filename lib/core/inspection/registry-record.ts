import { kindOf } from '../kinds/kind-registry';
import type { LockGrant } from '../grant/lock-grant';
import type { LockKind, LockOwner } from '../options/lock-info';

/** One grant as an engine reports it in its registry record (short names: the record is rewritten often). */
export interface GrantEntry {
  /** User key. */
  k: string;
  /** Kind. */
  t: LockKind;
  /** Redis name of the lock (per kind), to match waiters and holders. */
  l: string;
  /** Owner id in Redis. */
  o: string;
  /** Acquired at, epoch ms. */
  a: number;
  /** Fencing token (a cohort's local hand-offs change it without a Redis command). */
  f: number;
  /** Open holds. */
  h: number;
  /** Semaphore permits. */
  p?: number;
  /** Read-write mode. */
  m?: 'read' | 'write';
}

/** One engine's record as read back: who it is, its grants, its local waiters per lock name. */
export interface EngineRecord {
  owner: LockOwner;
  grants: GrantEntry[];
  waiting: Map<string, number>;
}

/** Field of the owner identity in a record. */
export const IDENTITY_FIELD = '@';

/** The last field and value built per grant, with the hold count they were built for. */
const built = new WeakMap<LockGrant, { holds: number; field: [string, string] }>();

/** The field and value of one grant (built again only when its hold count changed). */
export function grantField(grant: LockGrant, epochOffset: number): [string, string] {
  const holds = grant.openHolds.size;
  const cached = built.get(grant);
  if (cached?.holds === holds) return cached.field;
  const entry: GrantEntry = {
    k: grant.key,
    t: kindOfGrant(grant),
    l: grant.names.lock,
    o: grant.owner,
    a: Math.round(grant.grantedAt + epochOffset),
    f: grant.fencingToken,
    h: holds,
  };
  if (grant.options.limit !== undefined) entry.p = grant.options.permits ?? 1;
  if (grant.options.mode !== undefined) entry.m = grant.options.mode;
  const field: [string, string] = [`g:${grant.owner}:${grant.names.lock}`, JSON.stringify(entry)];
  built.set(grant, { holds, field });
  return field;
}

/** The field of a lock's local waiter count. */
export function waitingField(lockName: string): string {
  return `w:${lockName}`;
}

/** The inspection kind of a grant. */
export function kindOfGrant(grant: LockGrant): LockKind {
  return kindOf(grant.options).inspection;
}

/** Parses one record (HGETALL as a flat array); entries that do not parse are skipped. */
export function parseRecord(engineId: string, flat: readonly string[]): EngineRecord {
  const record: EngineRecord = {
    owner: { engine: engineId, host: '', pid: 0, app: '' },
    grants: [],
    waiting: new Map(),
  };
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = flat[i]!;
    const value = flat[i + 1]!;
    try {
      if (field === IDENTITY_FIELD) {
        const o = JSON.parse(value) as Partial<LockOwner>;
        record.owner = {
          engine: engineId,
          host: String(o.host ?? ''),
          pid: Number(o.pid ?? 0),
          app: String(o.app ?? ''),
        };
      } else if (field.startsWith('g:')) {
        record.grants.push(JSON.parse(value) as GrantEntry);
      } else if (field.startsWith('w:')) {
        record.waiting.set(field.slice(2), Number(value));
      }
    } catch {
      // a record written by another version: skip what does not parse
    }
  }
  return record;
}
