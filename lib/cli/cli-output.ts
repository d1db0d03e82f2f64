import type { ForceReleaseRecord, LockInfo, LockOwner } from '../core';

/** Renders locks as an aligned text table (one row per holder). */
export function locksTable(locks: readonly LockInfo[], now = Date.now()): string {
  if (locks.length === 0) return 'No lock is held.';
  const rows = [['KEY', 'KIND', 'OWNER', 'HELD', 'LEASE LEFT', 'TOKEN', 'HOLDS', 'WAITERS']];
  for (const lock of locks) {
    lock.holders.forEach((h, i) => {
      const kind = lock.kind + (h.mode ? ` (${h.mode})` : '') + (h.permits ? ` x${h.permits}` : '');
      rows.push([
        visible(lock.key),
        kind,
        who(h.owner),
        h.acquiredAt ? duration(now - h.acquiredAt) : '-',
        duration(h.expiresAt - now),
        h.fencingToken ? String(h.fencingToken) : '-',
        String(h.holdCount),
        i === 0 ? waiters(lock) : '',
      ]);
    });
  }
  return table(rows);
}

/** Renders audit entries as a text table. */
export function auditTable(records: readonly ForceReleaseRecord[]): string {
  if (records.length === 0) return 'No force release recorded.';
  const rows = [['WHEN', 'KEY', 'KIND', 'BY', 'REASON', 'EVICTED', 'FENCE NOW']];
  for (const r of records) {
    const evicted = r.evicted.map((e) => `${e.label} (token ${e.fencingToken})`).join(', ');
    rows.push([
      new Date(r.at).toISOString(),
      visible(r.key),
      r.kind,
      visible(r.by),
      visible(r.reason),
      evicted,
      String(r.fence),
    ]);
  }
  return table(rows);
}

function waiters(lock: LockInfo): string {
  const by = Object.entries(lock.waiters.byOwner).map(([owner, n]) => `${n} from ${owner}`);
  return lock.waiters.total === 0 ? '0' : `${lock.waiters.total} (${by.join(', ')})`;
}

function who(o: LockOwner): string {
  return o.host ? `${o.app}@${o.host} pid ${o.pid}` : `engine ${o.engine}`;
}

function duration(ms: number): string {
  if (!(ms > 0)) return '-';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** Control characters escaped, so user text cannot rewrite the terminal. */
function visible(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
