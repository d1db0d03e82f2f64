import { LockWrongTypeError } from '../errors';
import { KIND_TAG_LIST } from '../kinds/kind-registry';
import { type KeySpace, type LockKindTag } from '../kinds/key-space';
import type { LockEvents } from '../events/lock-events';
import type { LockGrant } from '../grant/lock-grant';
import { defineScript } from '../redis/script-library';
import { FORCE_RELEASE_NOTICE, type ForceReleaseNotice } from './force-release-notice';
import { appendAudit } from './force-release-audit';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import { KIND_TAGS } from '../kinds/kind-registry';
import { ownerLabel, type ForceReleaseRecord, type LockKind, type LockOwner } from '../options/lock-info';
import { onNodes } from './node-calls';
import { engineOf } from './owner-identity';
import { readRegistry, type RegistrySnapshot } from './registry-reader';
import type { Runtime } from '../runtime/runtime';

const FORCE = defineScript<
  [
    tag: string,
    channel: string,
    publish: string,
    fenceTtlMs: number,
    mutexType: string,
    noticeStem: string,
    userKey: string,
    reason: string,
    by: string,
  ],
  (string | number)[]
>('force-release');

/** What a force release needs. */
export interface ForceReleaseDeps {
  readonly engineId: string;
  /** The engine's runtime: an audit entry's time is its wall clock. */
  readonly runtime: Runtime;
  readonly identity: LockOwner;
  readonly keys: KeySpace;
  readonly inspectionKeys: InspectionKeys;
  readonly target: InspectionTarget;
  readonly grants: { readonly size: number } & Iterable<LockGrant>;
  readonly events: LockEvents;
  readonly fenceTtlMs: number;
}

/**
 * Force release, as an operator's decision that keeps fencing meaningful: one script per kind evicts
 * the holders, advances the key's fence past every token they had (reserved cohort tokens included:
 * the counter already sits at the last one), and wakes the waiters; then the evicted holders'
 * engines are told (their signal aborts with 'force-released'), the audit entry goes to the capped
 * stream, and the `forceReleased` event fires.
 */
export class ForceRelease {
  /** Notices that came before their grant, by owner and lock name: kept until `until` (monotonic). */
  private readonly early = new Map<string, { until: number; cause: Error }>();

  constructor(private readonly deps: ForceReleaseDeps) {}

  /** Evicts the holders of `key` (of `kind`, or of every kind). Resolves false when nothing was held. */
  async run(
    key: string,
    kind: LockKind | undefined,
    reason: string,
    by: string | undefined,
  ): Promise<boolean> {
    let released = false;
    // Who holds what, read before the eviction: an evicted engine that holds nothing else drops its
    // record at its next registry tick (250 ms), so a read after the script could miss its identity
    // and the audit would name an unknown holder. Unreadable: the audit names the engine id only.
    const registry: RegistrySnapshot | undefined = await readRegistry(
      this.deps.target,
      this.deps.inspectionKeys,
    ).catch(() => undefined);
    const releasedBy = by ?? ownerLabel(this.deps.identity);
    const noticeStem = this.deps.inspectionKeys.notice('');
    for (const plan of forcePlans(kind)) {
      const names = this.deps.keys.names(key, plan.tag);
      const replies = await onNodes(this.deps.target, (g) =>
        g.run(
          FORCE,
          [names.lock, names.aux, names.fence],
          [
            plan.tag,
            names.channel,
            g.publishCommand,
            this.deps.fenceTtlMs,
            plan.mutexType,
            noticeStem,
            key,
            reason,
            releasedBy,
          ],
          { userKey: key },
        ),
      );
      const evicted = new Map<string, number>();
      let fence = 0;
      let label: LockKind | undefined;
      for (const reply of replies) {
        if (reply[0] === -1) throw new LockWrongTypeError(key, names.lock, `holds a ${String(reply[1])}`);
        if (reply[0] !== 1) continue;
        fence = Math.max(fence, Number(reply[1]));
        label = reply[2] as LockKind;
        for (let i = 3; i + 4 < reply.length; i += 5) {
          const ownerId = String(reply[i]);
          evicted.set(ownerId, Math.max(Number(reply[i + 1]), evicted.get(ownerId) ?? 0));
        }
      }
      if (!label || evicted.size === 0) continue;
      released = true;
      // The script told the holders' engines; this one's own grants need not wait for the echo.
      for (const owner of evicted.keys()) {
        if (engineOf(owner) !== this.deps.engineId) continue;
        this.evict({ lock: names.lock, owner, reason, by: releasedBy });
      }
      const record: ForceReleaseRecord = {
        id: '',
        key,
        kind: label,
        reason,
        by: releasedBy,
        at: this.deps.runtime.wallNow(),
        fence,
        evicted: [...evicted].map(([ownerId, token]) => {
          const owner = registry?.owner(ownerId) ?? { engine: engineOf(ownerId), host: '', pid: 0, app: '' };
          const entry = registry?.grant(ownerId, names.lock);
          return { label: ownerLabel(owner), owner, fencingToken: entry?.f ?? token };
        }),
      };
      record.id = await appendAudit(this.deps.target, this.deps.inspectionKeys, record);
      this.deps.events.safeEmit('forceReleased', record);
    }
    return released;
  }

  /** A notice for this engine: the grant it names was force-released; its signal aborts now. */
  onNotice(message: string): void {
    let notice: ForceReleaseNotice;
    try {
      notice = JSON.parse(message) as ForceReleaseNotice;
    } catch {
      return;
    }
    if (notice?.type === FORCE_RELEASE_NOTICE) this.evict(notice);
  }

  /**
   * Ends this engine's grant named by the notice. None here yet: the notice travels on the subscriber
   * connection and can overtake the reply that grants the lock (RedLock also runs the force release
   * node by node while an attempt runs), so a grant of that owner and lock that arrives soon after is
   * ended as it arrives (onGrant).
   */
  private evict(notice: Pick<ForceReleaseNotice, 'lock' | 'owner' | 'reason' | 'by'>): void {
    const cause = new Error(`force-released by ${notice.by}: ${notice.reason}`);
    let known = false;
    for (const grant of [...this.deps.grants]) {
      if (grant.owner === notice.owner && grant.names.lock === notice.lock) {
        known = true;
        if (grant.active) grant.lose('force-released', cause);
      }
    }
    if (known) return;
    const now = this.deps.runtime.now();
    for (const [name, early] of this.early) if (early.until <= now) this.early.delete(name);
    this.early.set(`${notice.owner} ${notice.lock}`, { until: now + EARLY_NOTICE_KEEP_MS, cause });
  }

  /**
   * Whether a force release named this grant (owner id on lock) before its answer came; the notice is
   * taken: asked by an acquire about to hand the grant out, which then goes on as busy instead.
   */
  takeEarly(owner: string, lock: string): boolean {
    return this.take(owner, lock) !== undefined;
  }

  /** A new grant of this engine: ended at once when a force release named it before it arrived. */
  onGrant(grant: LockGrant): void {
    const cause = this.take(grant.owner, grant.names.lock);
    if (cause) grant.lose('force-released', cause);
  }

  /** Takes the early notice naming owner id on lock: its cause while it is kept, else undefined. */
  private take(owner: string, lock: string): Error | undefined {
    if (this.early.size === 0) return undefined;
    const name = `${owner} ${lock}`;
    const early = this.early.get(name);
    if (!early) return undefined;
    this.early.delete(name);
    return early.until > this.deps.runtime.now() ? early.cause : undefined;
  }
}

/**
 * How long a notice that found no grant is kept for one still on its way: far longer than a reply
 * takes (owner ids are never reused, so keeping it longer only costs an entry).
 */
const EARLY_NOTICE_KEEP_MS = 10_000;

/** What one force-release script call removes: a kind tag, and for `m` which type. */
function forcePlans(kind: LockKind | undefined): { tag: LockKindTag; mutexType: string }[] {
  if (kind === undefined) {
    return KIND_TAG_LIST.map((tag) => ({ tag, mutexType: tag === 'm' ? 'any' : '' }));
  }
  const mutexType = kind === 'mutex' || kind === 'token' ? kind : '';
  return [{ tag: KIND_TAGS[kind], mutexType }];
}
