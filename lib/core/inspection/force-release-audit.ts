import { defineScript } from '../redis/script-library';
import { decodeAuditEntry } from './force-release-notice';
import type { InspectionKeys } from './inspection-keys';
import type { InspectionTarget } from './inspection-target';
import type { ForceReleaseRecord } from '../options/lock-info';
import { onNodes } from './node-calls';

const AUDIT_APPEND = defineScript<(string | number)[], string>('audit-append');
const AUDIT_READ = defineScript<[count: number], [string, string[]][]>('audit-read');

/** Entries the audit stream keeps (approximately: MAXLEN ~). */
export const AUDIT_MAX_ENTRIES = 1000;
/** The audit stream expires this long after its last entry (7 days). */
export const AUDIT_TTL_MS = 7 * 24 * 3_600_000;

/** Appends a force release to the capped audit stream; resolves with the entry id. */
export async function appendAudit(
  target: InspectionTarget,
  keys: InspectionKeys,
  record: ForceReleaseRecord,
): Promise<string> {
  const fields: (string | number)[] = [
    ...['key', record.key, 'kind', record.kind, 'reason', record.reason, 'by', record.by],
    ...['at', record.at, 'fence', record.fence, 'evicted', JSON.stringify(record.evicted)],
  ];
  const args = [AUDIT_MAX_ENTRIES, AUDIT_TTL_MS, ...fields];
  const ids = await onNodes(target, (g) => g.run(AUDIT_APPEND, [keys.audit], args), 1);
  return ids[0] ?? '';
}

/** The newest audit entries, of `key` when given (RedLock: from the first node that answers). */
export async function readAudit(
  target: InspectionTarget,
  keys: InspectionKeys,
  key: string | undefined,
  limit: number,
): Promise<ForceReleaseRecord[]> {
  const count = key === undefined ? limit : AUDIT_MAX_ENTRIES;
  const [entries = []] = await onNodes(target, (g) => g.run(AUDIT_READ, [keys.audit], [count]), 1);
  const records = entries.flatMap(([id, fields]) => {
    const record = decodeAuditEntry(id, fields);
    return record && (key === undefined || record.key === key) ? [record] : [];
  });
  return records.slice(0, limit);
}
