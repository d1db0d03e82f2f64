import type { LockGrant } from '../grant/lock-grant';
import { KIND_TAG_LIST } from '../kinds/kind-registry';
import { type KeySpace } from '../kinds/key-space';
import { defineScript } from '../redis/script-library';
import { readAudit } from './force-release-audit';
import { ForceRelease, type ForceReleaseDeps } from './force-release';
import { globToRegExp } from './glob-match';
import { auditArgs, forceReleaseArgs, inspectArgs, listArgs } from './inspection-options';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import { decodeCursor, encodeCursor, listPosition } from './list-cursor';
import { KIND_TAGS, LOCK_KINDS } from '../kinds/kind-registry';
import {
  ownerLabel,
  type ForceReleaseRecord,
  type LockInfo,
  type LockKind,
  type ListLocksResult,
} from '../options/lock-info';
import { decodeLockState, type InspectReply, type KindState } from './lock-state';
import { mergeNodes, onNodes } from './node-calls';
import { readRegistry, type RegistrySnapshot } from './registry-reader';

const INSPECT = defineScript<[tags: string], InspectReply>('inspect');
/** list() inspects this many keys at once. */
const LIST_BATCH = 32;

/**
 * isLocked / inspect / list / forceRelease / forceReleases of one engine. Holders come from Redis'
 * own lock state (inspect.lua: one call per key, on its node); owner details, grant times, cohort
 * tokens and local waiters from the registry (registry-read.lua: one call). Never KEYS, never SCAN.
 * Every argument is checked before any command.
 */
export class LockInspector {
  private readonly forced: ForceRelease;
  private readonly keys: KeySpace;
  private readonly inspectionKeys: InspectionKeys;
  private readonly target: InspectionTarget;

  constructor(deps: ForceReleaseDeps) {
    this.forced = new ForceRelease(deps);
    ({ keys: this.keys, inspectionKeys: this.inspectionKeys, target: this.target } = deps);
  }

  /** True when `key` is held (by any kind, or by `kind`). */
  async isLocked(key: string, options?: { kind?: LockKind }): Promise<boolean> {
    const { kind } = inspectArgs(key, options);
    return (await this.states(key, kind)).length > 0;
  }

  /** Who holds `key` and who waits, or null when it is not held. */
  async inspect(key: string, options?: { kind?: LockKind }): Promise<LockInfo | null> {
    const { kind } = inspectArgs(key, options);
    const [state] = await this.states(key, kind);
    if (!state) return null;
    return describeLock(key, state, await readRegistry(this.target, this.inspectionKeys));
  }

  /** Held locks of every process and node, sorted by key and kind, one page at a time. */
  async list(options?: unknown): Promise<ListLocksResult> {
    const { match, kind, limit, cursor } = listArgs(options);
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const pattern = match === undefined ? undefined : globToRegExp(match);
    const registry = await readRegistry(this.target, this.inspectionKeys);
    const candidates = new Map<string, { key: string; kind: LockKind }>();
    for (const entry of registry.allGrants()) {
      if ((kind !== undefined && entry.t !== kind) || (pattern && !pattern.test(entry.k))) continue;
      const position = listPosition(entry.k, entry.t);
      if (after === undefined || position > after) candidates.set(position, { key: entry.k, kind: entry.t });
    }
    const ordered = [...candidates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const locks: LockInfo[] = [];
    let index = 0;
    while (index < ordered.length && locks.length < limit) {
      const batch = ordered.slice(index, index + Math.min(LIST_BATCH, limit - locks.length));
      index += batch.length;
      const found = await Promise.all(
        batch.map(async ([, c]) => {
          const [state] = await this.states(c.key, c.kind);
          return state ? describeLock(c.key, state, registry) : null;
        }),
      );
      for (const info of found) if (info) locks.push(info);
    }
    return index < ordered.length ? { locks, cursor: encodeCursor(ordered[index - 1]![0]) } : { locks };
  }

  /** See LockEngine.forceRelease. */
  async forceRelease(key: string, options: unknown): Promise<boolean> {
    const { kind, reason, by } = forceReleaseArgs(key, options);
    return this.forced.run(key, kind, reason, by);
  }

  /** The newest force-release audit entries (of `key`, when given). */
  async forceReleases(options?: unknown): Promise<ForceReleaseRecord[]> {
    const { key, limit } = auditArgs(options);
    return readAudit(this.target, this.inspectionKeys, key, limit);
  }

  /** See ForceRelease.takeEarly. */
  takeEarlyNotice(owner: string, lock: string): boolean {
    return this.forced.takeEarly(owner, lock);
  }

  /** See ForceRelease.onGrant. */
  onGrant(grant: LockGrant): void {
    this.forced.onGrant(grant);
  }

  /** A force-release notice for this engine arrived. */
  onNotice(message: string): void {
    this.forced.onNotice(message);
  }

  /** The lock state of `key` as Redis has it (a RedLock holder counts on a majority of nodes). */
  private async states(key: string, kind: LockKind | undefined): Promise<KindState[]> {
    const [m, rw, fair, sem] = (['m', 'rw', 'fair', 'sem'] as const).map((t) => this.keys.names(key, t));
    const tags = kind === undefined ? KIND_TAG_LIST.join(' ') : KIND_TAGS[kind];
    const redisKeys = [m!.lock, m!.aux, rw!.lock, rw!.aux, fair!.lock, fair!.aux, `${fair!.aux}:dl`];
    redisKeys.push(sem!.lock, sem!.aux, m!.fence);
    const lockNames = { m: m!.lock, rw: rw!.lock, fair: fair!.lock, sem: sem!.lock };
    const replies = await onNodes(this.target, (g) => g.run(INSPECT, redisKeys, [tags], { userKey: key }));
    const merged = mergeNodes(
      replies.map((r) => decodeLockState(r, lockNames)),
      this.target.quorum,
    ).sort((a, b) => LOCK_KINDS.indexOf(a.kind) - LOCK_KINDS.indexOf(b.kind));
    return kind === undefined ? merged : merged.filter((s) => s.kind === kind);
  }
}

/** A lock as reported: Redis' holders with their engines' details, and every engine's waiters. */
function describeLock(key: string, state: KindState, registry: RegistrySnapshot): LockInfo {
  const holders = state.holders.map((h) => {
    const entry = registry.grant(h.ownerId, state.lockName);
    return {
      owner: registry.owner(h.ownerId),
      acquiredAt: entry?.a ?? 0,
      expiresAt: h.expiresAt,
      // The holder's engine knows its token best: a cohort hands the lock on locally (the hash keeps
      // the first token), and a RedLock grant's token is not any one node's.
      fencingToken: entry?.f ?? h.fencingToken,
      holdCount: h.holdCount,
      ...(h.permits !== undefined && { permits: h.permits }),
      ...(h.mode !== undefined && { mode: h.mode }),
    };
  });
  const byEngine = new Map(state.waitersByEngine);
  for (const [engine, record] of registry.engines) {
    const local = record.waiting.get(state.lockName) ?? 0;
    // An engine's own count covers the waiters Redis records for it (and those queued behind them).
    if (local > 0) byEngine.set(engine, Math.max(local, byEngine.get(engine) ?? 0));
  }
  const byOwner: Record<string, number> = {};
  let total = 0;
  for (const [engine, count] of byEngine) {
    const label = ownerLabel(registry.owner(engine));
    byOwner[label] = (byOwner[label] ?? 0) + count;
    total += count;
  }
  return { key, kind: state.kind, holders, waiters: { total, byOwner } };
}
