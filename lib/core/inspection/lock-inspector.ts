import { LockRedisError, LockWrongTypeError } from '../errors';
import type { KeySpace, LockKindTag } from '../engine/key-space';
import type { LockEvents } from '../engine/lock-events';
import type { LockGrant } from '../engine/lock-grant';
import { defineScript } from '../redis/script-library';
import type { RedisGateway } from '../redis/redis-gateway';
import { withDeadline } from '../waiting/with-deadline';
import { globToRegExp } from './glob-match';
import { auditArgs, forceReleaseArgs, inspectArgs, listArgs } from './inspection-options';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import {
  KIND_TAGS,
  LOCK_KINDS,
  ownerLabel,
  type ForceReleaseRecord,
  type LockInfo,
  type LockKind,
  type LockOwner,
  type ListLocksResult,
} from './lock-info';
import { decodeLockState, type InspectReply, type KindState, type RawHolder } from './lock-state';
import { engineOf } from './owner-identity';
import { parseRecord, type EngineRecord, type GrantEntry } from './registry-record';
import { decodeAuditEntry, FORCE_RELEASE_NOTICE, type ForceReleaseNotice } from './force-release-notice';

const INSPECT = defineScript<[tags: string], InspectReply>('inspect');
const READ_REGISTRY = defineScript<[recordPrefix: string], [number, ...(string | string[])[]]>(
  'registry-read',
);
const FORCE = defineScript<
  [tag: string, channel: string, publish: string, fenceTtlMs: number, mutexType: string],
  (string | number)[]
>('force-release');
const AUDIT_APPEND = defineScript<(string | number)[], string>('audit-append');
const AUDIT_READ = defineScript<[count: number], [string, string[]][]>('audit-read');

/** Entries the audit stream keeps (approximately: MAXLEN ~). */
export const AUDIT_MAX_ENTRIES = 1000;
/** The audit stream expires this long after its last entry (7 days). */
export const AUDIT_TTL_MS = 7 * 24 * 3_600_000;
/** list() inspects this many keys at once. */
const LIST_BATCH = 32;

/** What the inspector reads and acts on. */
export interface LockInspectorDeps {
  readonly engineId: string;
  readonly identity: LockOwner;
  readonly keys: KeySpace;
  readonly inspectionKeys: InspectionKeys;
  readonly target: InspectionTarget;
  readonly grants: ReadonlySet<LockGrant>;
  readonly events: LockEvents;
  readonly fenceTtlMs: number;
  readonly commandTimeoutMs: number;
}

/** The registry as read: every live engine's record, and grant entries by owner and lock name. */
interface Registry {
  engines: Map<string, EngineRecord>;
  grants: Map<string, GrantEntry>;
}

/**
 * isLocked / inspect / list / forceRelease / forceReleases of one engine. Holders come from Redis'
 * own lock state (inspect.lua, one call per key on its node); owner details, grant times, cohort
 * tokens and local waiters from the registry (registry-read.lua, one call). No KEYS, no SCAN.
 */
export class LockInspector {
  constructor(private readonly deps: LockInspectorDeps) {}

  /** True when `key` is held (by any kind, or by `kind`). */
  async isLocked(key: string, options?: { kind?: LockKind }): Promise<boolean> {
    const { kind } = inspectArgs(key, options);
    return (await this.states(key, kind)).length > 0;
  }

  /** Who holds `key` and who waits, or null when it is not held. */
  async inspect(key: string, options?: { kind?: LockKind }): Promise<LockInfo | null> {
    const { kind } = inspectArgs(key, options);
    const states = await this.states(key, kind);
    if (states.length === 0) return null;
    return this.describe(key, states[0]!, await this.readRegistry());
  }

  /** Held locks of every process and node, sorted by key and kind, one page at a time. */
  async list(options?: {
    match?: string;
    kind?: LockKind;
    limit?: number;
    cursor?: string;
  }): Promise<ListLocksResult> {
    const { match, kind, limit, cursor } = listArgs(options);
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const pattern = match === undefined ? undefined : globToRegExp(match);
    const registry = await this.readRegistry();
    const candidates = new Map<string, { key: string; kind: LockKind }>();
    for (const entry of registry.grants.values()) {
      if (kind !== undefined && entry.t !== kind) continue;
      if (pattern && !pattern.test(entry.k)) continue;
      candidates.set(cursorOf(entry.k, entry.t), { key: entry.k, kind: entry.t });
    }
    const ordered = [...candidates.entries()]
      .filter(([id]) => after === undefined || id > after)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const locks: LockInfo[] = [];
    let index = 0;
    while (index < ordered.length && locks.length < limit) {
      const batch = ordered.slice(index, index + Math.min(LIST_BATCH, limit - locks.length));
      index += batch.length;
      const found = await Promise.all(
        batch.map(async ([, c]) => {
          const state = (await this.states(c.key, c.kind))[0];
          return state ? this.describe(c.key, state, registry) : null;
        }),
      );
      for (const info of found) if (info) locks.push(info);
    }
    const more = index < ordered.length;
    return more ? { locks, cursor: encodeCursor(ordered[index - 1]![0]) } : { locks };
  }

  /**
   * Evicts the holders of `key` (of `kind`, or of every kind held), advances its fence, wakes its
   * waiters, tells the evicted holders' engines (their signal aborts with 'force-released') and
   * writes the audit entry. Resolves false when nothing was held.
   */
  async forceRelease(
    key: string,
    options: { kind?: LockKind; reason: string; by?: string },
  ): Promise<boolean> {
    const { kind, reason, by = ownerLabel(this.deps.identity) } = forceReleaseArgs(key, options);
    const plans = forcePlans(kind);
    let released = false;
    let registry: Registry | undefined;
    for (const plan of plans) {
      const names = this.deps.keys.names(key, plan.tag);
      const replies = await this.onNodes((g) =>
        g.run(
          FORCE,
          [names.lock, names.aux, names.fence],
          [plan.tag, names.channel, g.publishCommand, this.deps.fenceTtlMs, plan.mutexType],
          key,
        ),
      );
      const evicted = new Map<string, RawHolder>();
      let fence = 0;
      let label: LockKind | undefined;
      for (const reply of replies) {
        if (reply[0] === -1) throw new LockWrongTypeError(key, names.lock, `holds a ${String(reply[1])}`);
        if (reply[0] !== 1) continue;
        fence = Math.max(fence, Number(reply[1]));
        label = reply[2] as LockKind;
        for (let i = 3; i + 4 < reply.length; i += 5) {
          const ownerId = String(reply[i]);
          const token = Number(reply[i + 1]);
          const known = evicted.get(ownerId);
          evicted.set(ownerId, {
            ownerId,
            expiresAt: 0,
            fencingToken: Math.max(token, known?.fencingToken ?? 0),
            holdCount: Number(reply[i + 2]),
          });
        }
      }
      if (!label || evicted.size === 0) continue;
      released = true;
      registry ??= await this.readRegistry().catch(() => undefined);
      const record: ForceReleaseRecord = {
        id: '',
        key,
        kind: label,
        reason,
        by,
        at: Date.now(),
        fence,
        evicted: [...evicted.values()].map((h) => {
          const owner = this.ownerOf(h.ownerId, registry);
          const entry = registry?.grants.get(grantKey(h.ownerId, names.lock));
          return {
            label: ownerLabel(owner),
            owner,
            fencingToken: Math.max(h.fencingToken, entry?.f ?? 0),
          };
        }),
      };
      for (const ownerId of evicted.keys()) {
        await this.notify({ lock: names.lock, owner: ownerId, key, reason, by });
      }
      record.id = await this.appendAudit(record);
      this.deps.events.safeEmit('forceReleased', record);
    }
    return released;
  }

  /** The newest force-release audit entries (of `key`, when given). */
  async forceReleases(options?: { key?: string; limit?: number }): Promise<ForceReleaseRecord[]> {
    const { key, limit } = auditArgs(options);
    const stream = this.deps.inspectionKeys.audit;
    const count = key === undefined ? limit : 1000;
    const [entries = []] = await this.onNodes((g) => g.run(AUDIT_READ, [stream], [count]), 1);
    const records = entries.flatMap(([id, fields]) => {
      const record = decodeAuditEntry(id, fields);
      return record && (key === undefined || record.key === key) ? [record] : [];
    });
    return records.slice(0, limit);
  }

  /** A notice for this engine: the grant it names was force-released; its signal aborts now. */
  onNotice(message: string): void {
    let notice: ForceReleaseNotice;
    try {
      notice = JSON.parse(message) as ForceReleaseNotice;
    } catch {
      return;
    }
    if (notice.type !== FORCE_RELEASE_NOTICE) return;
    for (const grant of [...this.deps.grants]) {
      if (grant.owner === notice.owner && grant.names.lock === notice.lock && grant.active) {
        grant.lose('force-released', new Error(`force-released by ${notice.by}: ${notice.reason}`));
      }
    }
  }

  /** The lock state of `key` as Redis has it (a RedLock holder counts on a majority of nodes). */
  private async states(key: string, kind: LockKind | undefined): Promise<KindState[]> {
    const { keys } = this.deps;
    const m = keys.names(key, 'm');
    const rw = keys.names(key, 'rw');
    const fair = keys.names(key, 'fair');
    const sem = keys.names(key, 'sem');
    const tags = kind === undefined ? 'm rw fair sem' : KIND_TAGS[kind];
    const redisKeys = [
      m.lock,
      m.aux,
      rw.lock,
      rw.aux,
      fair.lock,
      fair.aux,
      `${fair.aux}:dl`,
      sem.lock,
      sem.aux,
      m.fence,
    ];
    const lockNames = { m: m.lock, rw: rw.lock, fair: fair.lock, sem: sem.lock };
    const replies = await this.onNodes((g) => g.run(INSPECT, redisKeys, [tags], key));
    const perNode = replies.map((r) => decodeLockState(r, lockNames));
    const merged = mergeNodes(perNode, this.deps.target.quorum);
    const ordered = merged.sort((a, b) => LOCK_KINDS.indexOf(a.kind) - LOCK_KINDS.indexOf(b.kind));
    return kind === undefined ? ordered : ordered.filter((s) => s.kind === kind);
  }

  /** Every live engine record (RedLock: the union over the nodes that answer). */
  private async readRegistry(): Promise<Registry> {
    const ik = this.deps.inspectionKeys;
    const replies = await this.onNodes((g) => g.run(READ_REGISTRY, [ik.engines], [ik.enginePrefix]), 1);
    const engines = new Map<string, EngineRecord>();
    const grants = new Map<string, GrantEntry>();
    for (const reply of replies) {
      for (let i = 1; i + 1 < reply.length; i += 2) {
        const id = String(reply[i]);
        if (engines.has(id)) continue;
        const record = parseRecord(id, reply[i + 1] as string[]);
        engines.set(id, record);
        for (const g of record.grants) grants.set(grantKey(g.o, g.l), g);
      }
    }
    return { engines, grants };
  }

  private describe(key: string, state: KindState, registry: Registry): LockInfo {
    const holders = state.holders.map((h) => {
      const entry = registry.grants.get(grantKey(h.ownerId, state.lockName));
      return {
        owner: this.ownerOf(h.ownerId, registry),
        acquiredAt: entry?.a ?? 0,
        expiresAt: h.expiresAt,
        // A cohort hands the lock on locally: the engine knows the current holder's token.
        fencingToken: Math.max(h.fencingToken, entry?.f ?? 0),
        holdCount: h.holdCount,
        ...(h.permits !== undefined && { permits: h.permits }),
        ...(h.mode !== undefined && { mode: h.mode }),
      };
    });
    const byEngine = new Map(state.waitersByEngine);
    for (const [engine, record] of registry.engines) {
      const local = record.waiting.get(state.lockName) ?? 0;
      // The engine's own count covers the waiters Redis records for it (and those queued behind them).
      if (local > 0) byEngine.set(engine, Math.max(local, byEngine.get(engine) ?? 0));
    }
    const byOwner: Record<string, number> = {};
    let total = 0;
    for (const [engine, count] of byEngine) {
      const label = ownerLabel(this.ownerOf(engine, registry));
      byOwner[label] = (byOwner[label] ?? 0) + count;
      total += count;
    }
    return { key, kind: state.kind, holders, waiters: { total, byOwner } };
  }

  private ownerOf(ownerOrEngineId: string, registry: Registry | undefined): LockOwner {
    const engine = engineOf(ownerOrEngineId);
    return registry?.engines.get(engine)?.owner ?? { engine, host: '', pid: 0, app: '' };
  }

  /** Publishes a force-release notice to the holder's engine (directly when it is this one). */
  private async notify(notice: Omit<ForceReleaseNotice, 'type'>): Promise<void> {
    const message: ForceReleaseNotice = { type: FORCE_RELEASE_NOTICE, ...notice };
    const engine = engineOf(notice.owner);
    if (engine === this.deps.engineId) {
      this.onNotice(JSON.stringify(message));
      return;
    }
    const channel = this.deps.inspectionKeys.notice(engine);
    await this.onNodes(
      (g) =>
        withDeadline(
          g.client.publish(channel, JSON.stringify(message)),
          this.deps.commandTimeoutMs,
          () => new LockRedisError(`Redis did not answer PUBLISH within ${this.deps.commandTimeoutMs} ms`),
        ),
      1,
    ).catch(() => undefined); // the holder still learns it at its next renewal
  }

  private async appendAudit(record: ForceReleaseRecord): Promise<string> {
    const fields = [
      'key',
      record.key,
      'kind',
      record.kind,
      'reason',
      record.reason,
      'by',
      record.by,
      'at',
      record.at,
      'fence',
      record.fence,
      'evicted',
      JSON.stringify(record.evicted),
    ];
    const ids = await this.onNodes(
      (g) =>
        g.run(AUDIT_APPEND, [this.deps.inspectionKeys.audit], [AUDIT_MAX_ENTRIES, AUDIT_TTL_MS, ...fields]),
      1,
    );
    return ids[0] ?? '';
  }

  /**
   * Runs `fn` on every node; resolves with the answers once at least `needed` (default: the quorum)
   * answered, else rejects with the first error.
   */
  private async onNodes<T>(
    fn: (gateway: RedisGateway) => Promise<T>,
    needed = this.deps.target.quorum,
  ): Promise<T[]> {
    const settled = await Promise.allSettled(this.deps.target.gateways.map(fn));
    const ok = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    if (ok.length >= needed) return ok;
    throw (settled.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
  }
}

/** What one force-release script call removes: a kind tag, and for `m` which type. */
function forcePlans(kind: LockKind | undefined): { tag: LockKindTag; mutexType: string }[] {
  if (kind === undefined) {
    return [
      { tag: 'm', mutexType: 'any' },
      { tag: 'rw', mutexType: '' },
      { tag: 'fair', mutexType: '' },
      { tag: 'sem', mutexType: '' },
    ];
  }
  const mutexType = kind === 'mutex' ? 'hash' : kind === 'token' ? 'string' : '';
  return [{ tag: KIND_TAGS[kind], mutexType }];
}

/** Holders seen on at least `quorum` nodes (one node: all of them), waiters as the most any node saw. */
function mergeNodes(perNode: KindState[][], quorum: number): KindState[] {
  if (perNode.length === 1) return perNode[0]!;
  const byKind = new Map<LockKind, { state: KindState; seen: Map<string, number> }>();
  for (const states of perNode) {
    for (const state of states) {
      const merged = byKind.get(state.kind) ?? {
        state: { ...state, holders: [] as RawHolder[], waitersByEngine: new Map<string, number>() },
        seen: new Map<string, number>(),
      };
      byKind.set(state.kind, merged);
      for (const h of state.holders) {
        const n = (merged.seen.get(h.ownerId) ?? 0) + 1;
        merged.seen.set(h.ownerId, n);
        if (n === quorum) merged.state.holders.push(h);
      }
      for (const [engine, count] of state.waitersByEngine) {
        merged.state.waitersByEngine.set(
          engine,
          Math.max(count, merged.state.waitersByEngine.get(engine) ?? 0),
        );
      }
    }
  }
  return [...byKind.values()].map((m) => m.state).filter((s) => s.holders.length > 0);
}

function grantKey(ownerId: string, lockName: string): string {
  return `${ownerId}\u0000${lockName}`;
}

function cursorOf(key: string, kind: LockKind): string {
  return `${key}\u0000${LOCK_KINDS.indexOf(kind)}`;
}

function encodeCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const position = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/\u0000[0-4]$/.test(position) || encodeCursor(position) !== cursor) {
    throw new TypeError('cursor must be a cursor returned by list()');
  }
  return position;
}
