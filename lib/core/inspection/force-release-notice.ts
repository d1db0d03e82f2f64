import type { ForceReleaseRecord, LockKind } from '../options/lock-info';

/** `type` of a force-release notice (on an engine's notice channel). */
export const FORCE_RELEASE_NOTICE = 'force-released';

/**
 * What an evicted holder's engine is told: which grant (owner id on which lock), by whom, why. Built
 * as JSON by force-release.lua (its field names and `type` must follow this interface).
 */
export interface ForceReleaseNotice {
  type: typeof FORCE_RELEASE_NOTICE;
  /** Redis name of the lock. */
  lock: string;
  owner: string;
  key: string;
  reason: string;
  by: string;
}

/** One audit stream entry back as a record; null when it does not parse. */
export function decodeAuditEntry(id: string, flat: readonly string[]): ForceReleaseRecord | null {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) f.set(flat[i]!, flat[i + 1]!);
  const key = f.get('key');
  if (key === undefined) return null;
  let evicted: ForceReleaseRecord['evicted'] = [];
  try {
    evicted = JSON.parse(f.get('evicted') ?? '[]') as ForceReleaseRecord['evicted'];
  } catch {
    // keep the entry without its holders
  }
  return {
    id,
    key,
    kind: (f.get('kind') ?? 'mutex') as LockKind,
    reason: f.get('reason') ?? '',
    by: f.get('by') ?? '',
    at: Number(f.get('at') ?? 0),
    fence: Number(f.get('fence') ?? 0),
    evicted,
  };
}
